//! Deadlines on a person's answer: enforced by the server, on time, also across a
//! restart, and a late answer gets 410 with the interrupt's state.

use serde_json::{json, Value};
use shared::{Event, EventBody, Outcome};

use crate::helpers::{assert_valid_session, spawn_app_with, start, test_config, write_script};

fn ask(timeout: Option<u64>) -> Value {
    let mut arguments = json!({"prompt": "Name?", "kind": "text"});
    if let Some(seconds) = timeout {
        arguments["timeoutSeconds"] = json!(seconds);
    }
    json!([
        {"toolCalls": [{"name": "request_input", "arguments": arguments}]},
        {"text": "No answer, moving on."}
    ])
}

fn paused_interrupt(events: &[(u64, Event)]) -> shared::Interrupt {
    match &events.last().unwrap().1.body {
        EventBody::RunFinished {
            outcome: Some(Outcome::Interrupt { interrupts }),
            ..
        } => interrupts[0].clone(),
        other => panic!("expected an interrupt, got {other:?}"),
    }
}

fn expired_result(events: &[(u64, Event)]) -> Value {
    events
        .iter()
        .find_map(|(_, e)| match &e.body {
            EventBody::ToolCallResult { content, .. } => {
                let value: Value = serde_json::from_str(content).unwrap();
                (value["status"] == "expired").then_some(value)
            }
            _ => None,
        })
        .expect("an expired result")
}

fn millis(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .unwrap()
        .timestamp_millis()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_question_expires_on_time_and_the_run_goes_on() {
    let app = spawn_app_with(ask(Some(1)), &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "ask").await;
    let interrupt = paused_interrupt(&socket.until_run_end().await);
    let deadline = millis(interrupt.expires_at.as_deref().unwrap());
    // Nothing but the server's own clock ends this wait: no request is made meanwhile.
    let continued = socket.until_run_end().await;
    let started_at = continued[0].1.timestamp.unwrap() as i64;
    let late = started_at - deadline;
    assert!(
        (0..1000).contains(&late),
        "expired {late} ms after the deadline"
    );
    assert_eq!(
        expired_result(&continued)["error"],
        "the person did not answer before the deadline"
    );
    assert_eq!(continued.last().unwrap().1.type_name(), "RUN_FINISHED");

    let path = format!("/api/sessions/{session}/interrupts/{}", interrupt.id);
    let (status, body) = app
        .post(
            &path,
            json!({"status": "resolved", "payload": {"text": "Ada"}}),
        )
        .await;
    assert_eq!(status, 410, "{body}");
    assert_eq!(body["error"]["code"], "interrupt_expired");
    assert_eq!(body["error"]["details"]["state"], "expired");
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_that_expired_while_tandem_was_down_expires_at_start() {
    let (dir, url) = crate::helpers::fresh_database();
    let script = write_script(dir.path(), ask(Some(1)));
    let first = start(test_config(&url, &script, &[])).await;
    let (session, mut socket) = first.open_session().await;
    first.say(&session, "ask").await;
    let interrupt = paused_interrupt(&socket.until_run_end().await);
    first.stop().await;
    drop(socket);
    // Let the deadline pass while no server runs: that is the condition under test.
    let deadline = millis(interrupt.expires_at.as_deref().unwrap());
    let wait = (deadline - chrono::Utc::now().timestamp_millis() + 50).max(0) as u64;
    tokio::time::sleep(std::time::Duration::from_millis(wait)).await;

    let second = start(test_config(&url, &script, &[])).await;
    let mut socket = second.socket(&session, 0).await;
    // The backlog is read first, so this finds the expiry whether it happened before or
    // after the socket connected; then the continued run's end.
    let mut events = socket
        .until(|e| matches!(&e.body, EventBody::ToolCallResult { content, .. } if content.contains("\"expired\"")))
        .await;
    events.extend(socket.until_run_end().await);
    expired_result(&events);
    assert_eq!(events.last().unwrap().1.type_name(), "RUN_FINISHED");
    let (status, _) = second
        .post(
            &format!("/api/sessions/{session}/interrupts/{}", interrupt.id),
            json!({"status": "cancelled"}),
        )
        .await;
    assert_eq!(status, 410);
    assert_valid_session(&second.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_default_deadline_applies_to_questions_and_approvals() {
    let workspace = tempfile::tempdir().unwrap();
    let script = json!([
        {"toolCalls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}]},
        {"text": "Not saved."}
    ]);
    let app = spawn_app_with(
        script,
        &[
            "--input-timeout-secs",
            "1",
            "--workspace-dir",
            workspace.path().to_str().unwrap(),
        ],
    )
    .await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "save").await;
    let interrupt = paused_interrupt(&socket.until_run_end().await);
    assert_eq!(interrupt.reason, "tool_approval");
    assert!(
        interrupt.expires_at.is_some(),
        "the default deadline applies"
    );
    let continued = socket.until_run_end().await;
    let decision = continued
        .iter()
        .find_map(|(_, e)| match &e.body {
            EventBody::Custom { name, value } if name == "tandem.tool_approval" => {
                Some(value.clone())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(decision["approved"], false);
    assert!(expired_result(&continued)["error"]
        .as_str()
        .unwrap()
        .contains("did not run"));
    assert!(!workspace.path().join("local/a.txt").exists());
    let id = &interrupt.id;
    let (status, _) = app
        .post(
            &format!("/api/sessions/{session}/interrupts/{id}"),
            json!({"status": "resolved", "payload": {"approved": true}}),
        )
        .await;
    assert_eq!(status, 410);
}
