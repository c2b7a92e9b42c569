//! Restarts: a paused session is answerable by a new instance on the same file, and a
//! process killed mid-run (the real binary, SIGKILL) leaves a valid, usable log.

use serde_json::json;
use shared::EventBody;

use crate::helpers::child::Tandem;
use crate::helpers::socket::interrupt_id;
use crate::helpers::{assert_valid_session, start, test_config, write_script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_session_is_answered_after_a_restart_and_resumes_once() {
    let (dir, url) = crate::helpers::fresh_database();
    let script = write_script(
        dir.path(),
        json!([{"toolCalls": [{"name": "request_input", "arguments": {"prompt": "Name?", "kind": "text"}}]}, {"text": "Hello Ada."}]),
    );
    let first = start(test_config(&url, &script, &[])).await;
    let session = first.create_session().await;
    let mut socket = first.socket(&session, 0).await;
    socket.backlog().await;
    first.say(&session, "ask me").await;
    let id = interrupt_id(&socket.until_run_end().await);
    first.stop().await;
    drop(socket);

    let second = start(test_config(&url, &script, &[])).await;
    let (_, detail) = second.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(detail["status"], "awaiting_input");
    let before = second.log(&session).await;
    let mut socket = second.socket(&session, 0).await;
    let (backlog, _) = socket.backlog().await;
    assert_eq!(backlog, before, "the whole history is there");
    socket.send(json!({"kind": "resume", "interruptId": id, "status": "resolved", "payload": {"text": "Ada"}})).await;
    socket.until_run_end().await;
    let (status, _) = second
        .post(
            &format!("/api/sessions/{session}/interrupts/{id}"),
            json!({"status": "resolved", "payload": {"text": "Ada"}}),
        )
        .await;
    assert_eq!(status, 200, "a repeat after resuming is a no-op");
    let log = second.log(&session).await;
    let resumes = log
        .iter()
        .filter(|(_, e)| e.type_name() == "RUN_STARTED")
        .count();
    assert_eq!(resumes, 2, "the run resumed exactly once");
    assert_valid_session(&log, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_mid_answer_continues_by_itself_after_restart() {
    let (dir, url) = crate::helpers::fresh_database();
    let long = "word ".repeat(500);
    let script = write_script(
        dir.path(),
        json!([
            {"reasoning": "thinking", "text": long, "toolCalls": [{"name": "clock", "arguments": {}}]},
            {"text": "after restart"},
            {"text": "and again"}
        ]),
    );
    let mut tandem = Tandem::spawn(&url, &script);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    // Kill it while it streams: after the second word of the answer is committed.
    socket
        .until(|e| e.type_name() == "TEXT_MESSAGE_CONTENT")
        .await;
    socket
        .until(|e| e.type_name() == "TEXT_MESSAGE_CONTENT")
        .await;
    tandem.kill();

    let restarted = Tandem::spawn(&url, &script);
    let app = restarted.client();
    let mut socket = app.socket(&session, 0).await;
    let events = socket.until_run_end().await;
    assert_eq!(events.last().unwrap().1.type_name(), "RUN_FINISHED");
    let log = app.log(&session).await;
    assert_valid_session(&log, true);
    let runs = log
        .iter()
        .filter(|(_, e)| e.type_name() == "RUN_STARTED")
        .count();
    assert_eq!(runs, 1, "the same run went on");
    let marker = log.iter().position(|(_, e)| {
        matches!(&e.body, EventBody::Custom { name, .. } if name == "tandem.run_recovered")
    });
    let answer = log.iter().position(|(_, e)| {
        matches!(&e.body, EventBody::TextMessageContent { delta, .. } if delta.contains("restart"))
    });
    assert!(
        marker.unwrap() < answer.unwrap(),
        "the continuation follows the marker"
    );
    let (_, detail) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(detail["status"], "idle");
    app.say(&session, "continue").await;
    let events = socket.until_run_end().await;
    assert_eq!(
        events.last().unwrap().1.type_name(),
        "RUN_FINISHED",
        "the session is usable again"
    );
}
