//! Every limit, hit: the documented error, nothing lost, and nobody else affected.
//!
//! Sizes (bodies, socket messages, user messages), bodies that stop arriving
//! ([`slow_bodies`]), per-user rates (sessions and messages per minute, sockets), per-run
//! bounds (events, tool result size, a hostile question schema), and a panicking run.

mod queue;
mod slow_bodies;

use serde_json::{json, Value};
use shared::EventBody;

use crate::helpers::socket::Received;
use crate::helpers::{assert_valid_session, spawn_app_with, spawn_app_with_users, types};

/// A turn of `words` words of text.
fn long_text(words: usize) -> Value {
    json!({"text": vec!["word"; words].join(" ")})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_bodies_messages_and_frames_get_their_errors() {
    let flags = [
        "--max-body-bytes",
        "2048",
        "--max-frame-bytes",
        "2048",
        "--max-message-bytes",
        "16",
    ];
    let app = spawn_app_with(json!([{"text": "ok"}]), &flags).await;
    let (session, mut socket) = app.open_session().await;
    let messages = format!("/api/sessions/{session}/messages");
    let (status, body) = app.post(&messages, json!({"text": "x".repeat(3000)})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (413, Some("payload_too_large"))
    );
    let (status, body) = app.post(&messages, json!({"text": "x".repeat(17)})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_message"))
    );
    socket
        .send(json!({"kind": "user_message", "text": "y".repeat(17)}))
        .await;
    assert_eq!(socket.error_code().await, "invalid_message");

    let mut other = app.socket(&session, 0).await;
    other.backlog().await;
    socket.send_text(&"z".repeat(3000)).await;
    assert!(matches!(
        socket.receive().await,
        Received::Closed(Some(1009))
    ));
    app.say(&session, "short one").await;
    let events = other.until_run_end().await;
    assert_eq!(
        types(&events).last(),
        Some(&"RUN_FINISHED"),
        "the other viewer goes on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_and_messages_per_minute_are_limited_per_user() {
    let flags = ["--sessions-per-minute", "2", "--messages-per-minute", "1"];
    let users = spawn_app_with_users(json!([{"text": "ok"}]), &flags, &["alice", "bob"]).await;
    let (alice, bob) = (&users[0], &users[1]);
    let first = alice.create_session().await;
    let second = alice.create_session().await;
    let response = alice
        .http
        .post(alice.url("/api/sessions"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    let wait: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=31).contains(&wait), "{wait}");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limited");
    assert_eq!(
        bob.post("/api/sessions", json!({})).await.0,
        201,
        "bob has his own allowance"
    );

    alice.say(&first, "one").await;
    let (status, body) = alice
        .post(
            &format!("/api/sessions/{second}/messages"),
            json!({"text": "two"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (429, Some("rate_limited"))
    );
    let mut socket = alice.socket(&second, 0).await;
    socket.backlog().await;
    socket
        .send(json!({"kind": "user_message", "text": "three"}))
        .await;
    assert_eq!(socket.error_code().await, "rate_limited");
    let (_, log) = alice.get(&format!("/api/sessions/{second}/events")).await;
    assert_eq!(
        log["events"],
        json!([]),
        "nothing was written for refused messages"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_user_may_hold_only_so_many_sockets() {
    let users =
        spawn_app_with_users(json!([]), &["--sockets-per-user", "2"], &["alice", "bob"]).await;
    let (alice, bob) = (&users[0], &users[1]);
    let session = alice.create_session().await;
    let first = alice.socket(&session, 0).await;
    let _second = alice.socket(&session, 0).await;
    let (status, body) = alice
        .try_socket(&session, 0, &[])
        .await
        .err()
        .expect("refused");
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (429, Some("too_many_sockets"))
    );
    let bobs = bob.create_session().await;
    assert!(
        bob.try_socket(&bobs, 0, &[]).await.is_ok(),
        "bob has his own places"
    );
    first.close().await;
    assert!(
        alice.try_socket(&session, 0, &[]).await.is_ok(),
        "a closed socket frees its place"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_reaches_its_event_limit_ends_cleanly() {
    let app = spawn_app_with(json!([long_text(200)]), &["--max-run-events", "40"]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    let events = socket.until_run_end().await;
    match &events.last().unwrap().1.body {
        EventBody::RunError { code, .. } => assert_eq!(code.as_deref(), Some("max_run_events")),
        other => panic!("expected RUN_ERROR, got {other:?}"),
    }
    let log = app.log(&session).await;
    assert!(
        log.len() < 60,
        "the run stopped near its limit: {}",
        log.len()
    );
    assert_valid_session(&log, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_tool_results_are_truncated_with_a_marker() {
    let expression = "1+".repeat(2500) + "1";
    let turns = json!([
        {"toolCalls": [{"name": "calculator", "arguments": {"expression": expression}}]},
        {"text": "done"}
    ]);
    let app = spawn_app_with(turns, &["--max-tool-result-bytes", "1000"]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    let events = socket.until_run_end().await;
    let content = events
        .iter()
        .find_map(|(_, e)| match &e.body {
            EventBody::ToolCallResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .expect("a tool result");
    assert!(content.len() <= 1000, "{}", content.len());
    let marker: Value = serde_json::from_str(&content).unwrap();
    assert_eq!(marker["truncated"], true);
    assert!(marker["originalBytes"].as_u64().unwrap() > 1000);
    assert_eq!(types(&events).last(), Some(&"RUN_FINISHED"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_question_schema_becomes_an_error_result_and_the_run_goes_on() {
    let mut deep = json!({"type": "string"});
    for _ in 0..40 {
        deep = json!({"type": "object", "properties": {"x": deep}});
    }
    let turns = json!([
        {"toolCalls": [{"name": "request_input",
            "arguments": {"prompt": "Fill this", "kind": "form", "schema": deep}}]},
        {"text": "fine, no form"}
    ]);
    let app = spawn_app_with(turns, &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    let events = socket.until_run_end().await;
    let error = events.iter().find_map(|(_, e)| match &e.body {
        EventBody::ToolCallResult { content, .. } => Some(content.clone()),
        _ => None,
    });
    assert!(error.unwrap().contains("deeper"), "the model is told why");
    assert!(matches!(
        events.last().unwrap().1.body,
        EventBody::RunFinished { .. }
    ));
    let (_, detail) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(detail["pendingInterrupts"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_run_ends_with_an_internal_error_and_the_session_recovers() {
    let turns = json!([
        {"text": "about to fail", "panic": "engine bug"},
        {"text": "back again"}
    ]);
    let app = spawn_app_with(turns, &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    let events = socket.until_run_end().await;
    match &events.last().unwrap().1.body {
        EventBody::RunError { code, message } => {
            assert_eq!(code.as_deref(), Some("internal"));
            assert!(
                !message.contains("engine bug"),
                "the panic's text stays in the server log: {message}"
            );
        }
        other => panic!("expected RUN_ERROR, got {other:?}"),
    }
    app.say(&session, "again").await;
    let next = socket.until_run_end().await;
    assert_eq!(
        types(&next).last(),
        Some(&"RUN_FINISHED"),
        "the session is not stuck"
    );
    assert_valid_session(&app.log(&session).await, true);
}
