//! A thousand sessions paused on a question survive a restart: they all still await
//! input, each answer resumes its run exactly once, and a repeat is a no-op.
//!
//! The app runs in-process; a restart is stop + start on the same SQLite file. Waiting
//! is on each session's socket, never on the clock.

use std::time::{Duration, Instant};

use futures_util::{stream, StreamExt};
use serde_json::json;

use crate::helpers::socket::interrupt_id;
use crate::helpers::{assert_valid_session, start, test_config, write_script, TestApp};

const SESSIONS: usize = 1000;
/// Sessions driven at once.
const CONCURRENCY: usize = 32;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_paused_sessions_survive_a_restart_and_each_resumes_once() {
    let (dir, url) = crate::helpers::fresh_database();
    let question = json!({"prompt": "Name?", "kind": "text"});
    let ask = json!({"toolCalls": [{"name": "request_input", "arguments": question}]});
    let script = write_script(dir.path(), json!([ask, {"text": "Hello, Ada."}]));
    let first = start(test_config(&url, &script, &[])).await;
    let t = Instant::now();
    let paused: Vec<(String, String)> = stream::iter(0..SESSIONS)
        .map(|_| pause(&first))
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let pausing = t.elapsed();
    first.stop().await;

    let t = Instant::now();
    let second = start(test_config(&url, &script, &[])).await;
    let (status, _) = second.get("/healthz").await;
    assert_eq!(status, 200);
    let starting = t.elapsed();
    let (_, list) = second.get("/api/sessions").await;
    let list = list["sessions"].as_array().unwrap();
    assert_eq!(list.len(), SESSIONS);
    assert!(
        list.iter().all(|s| s["status"] == "awaiting_input"),
        "every session still awaits its answer"
    );

    let t = Instant::now();
    stream::iter(&paused)
        .for_each_concurrent(CONCURRENCY, |(session, id)| {
            answer_once(&second, session, id)
        })
        .await;
    let answering = t.elapsed();
    println!(
        "faults/paused: {SESSIONS} sessions paused in {:.1?}; start with them paused {:.1?}; \
         all answered and finished in {:.1?} ({:.1?} each)",
        pausing,
        starting,
        answering,
        answering / SESSIONS as u32
    );
    assert!(
        starting < Duration::from_secs(10),
        "starting took {starting:?}"
    );
}

/// Creates a session and pauses it on its question; returns it and the interrupt id.
async fn pause(app: &TestApp) -> (String, String) {
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "ask me").await;
    (session, interrupt_id(&socket.until_run_end().await))
}

/// Answers, waits for the resumed run to finish, repeats the answer, checks the log.
async fn answer_once(app: &TestApp, session: &str, id: &str) {
    let (_, detail) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(detail["status"], "awaiting_input");
    assert_eq!(detail["pendingInterrupts"][0]["id"], id);
    let mut socket = app.socket(session, 0).await;
    socket.backlog().await;
    let path = format!("/api/sessions/{session}/interrupts/{id}");
    let answer = json!({"status": "resolved", "payload": {"text": "Ada"}});
    let (status, first) = app.post(&path, answer.clone()).await;
    assert_eq!(status, 202, "{first}");
    let resumed = socket.until_run_end().await;
    assert_eq!(resumed.last().unwrap().1.type_name(), "RUN_FINISHED");
    let (status, again) = app.post(&path, answer).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(
        (&again["duplicate"], &again["runId"]),
        (&json!(true), &first["runId"])
    );
    let log = app.log(session).await;
    let runs = log.iter().filter(|(_, e)| e.type_name() == "RUN_STARTED");
    assert_eq!(runs.count(), 2, "one run, resumed once");
    assert_eq!(log.last().unwrap().1.type_name(), "RUN_FINISHED");
    assert_valid_session(&log, true);
}
