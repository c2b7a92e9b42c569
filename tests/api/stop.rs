//! Stop is a persisted command: it stops the model stream or a tool call at once, keeps
//! what was said, closes what was open with a "cancelled" result, and ends the run
//! `cancelled` — while text streams, while a tool call streams, during a provider retry.

use serde_json::{json, Value};
use shared::{Event, EventBody, Outcome};

use crate::helpers::provider::{fixture, ProviderServer, Reply};
use crate::helpers::{assert_valid_session, spawn_app_with, TestApp};

async fn stop(app: &TestApp, session: &str) {
    let (status, body) = app
        .post(&format!("/api/sessions/{session}/cancel"), json!({}))
        .await;
    assert_eq!(status, 202, "{body}");
}

fn ends_cancelled(events: &[(u64, Event)]) {
    assert!(
        matches!(
            &events.last().unwrap().1.body,
            EventBody::RunFinished {
                outcome: Some(Outcome::Cancelled),
                ..
            }
        ),
        "{:?}",
        events.last()
    );
}

fn stop_was_persisted(log: &[(u64, Event)]) {
    assert!(log.iter().any(|(_, e)| matches!(
        &e.body,
        EventBody::Custom { name, .. } if name == "tandem.stop_requested"
    )));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_during_text_keeps_the_partial_answer_and_the_session_goes_on() {
    let long = "word ".repeat(400);
    let turns = json!([{"text": long}, {"text": "Next answer."}]);
    let app = spawn_app_with(turns, &["--token-delay-ms", "5"]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "talk").await;
    socket
        .until(|e| matches!(&e.body, EventBody::TextMessageContent { delta, .. } if delta.contains("word")))
        .await;
    stop(&app, &session).await;
    let events = socket.until_run_end().await;
    ends_cancelled(&events);
    let log = app.log(&session).await;
    let said: String = log
        .iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::TextMessageContent { delta, .. } if delta.contains("word") => {
                Some(delta.as_str())
            }
            _ => None,
        })
        .collect();
    assert!(
        !said.is_empty() && said.len() < long.len(),
        "the partial text is kept"
    );
    stop_was_persisted(&log);
    assert_valid_session(&log, true);
    app.say(&session, "again").await;
    let next = socket.until_run_end().await;
    assert_eq!(next.last().unwrap().1.type_name(), "RUN_FINISHED");
}

/// The app on the Anthropic engine, talking to a fixture server with these replies.
async fn on_provider(replies: Vec<Reply>) -> (TestApp, ProviderServer) {
    let provider = ProviderServer::start(replies).await;
    let key = crate::helpers::key_file("sk-ant-test");
    let flags = [
        "--engine",
        "anthropic",
        "--anthropic-base-url",
        provider.url.as_str(),
        "--anthropic-api-key-file",
        &key,
    ];
    (spawn_app_with(json!([]), &flags).await, provider)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_during_a_tool_call_closes_it_with_a_cancelled_result() {
    let slow = Reply::Sse {
        body: fixture("anthropic/tool_use.sse"),
        split_every: None,
        pace: std::time::Duration::from_millis(40),
        cut_after: None,
    };
    let (app, _provider) = on_provider(vec![slow]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "add").await;
    socket.until(|e| e.type_name() == "TOOL_CALL_ARGS").await;
    stop(&app, &session).await;
    let events = socket.until_run_end().await;
    ends_cancelled(&events);
    let result = events
        .iter()
        .find_map(|(_, e)| match &e.body {
            EventBody::ToolCallResult { content, .. } => {
                Some(serde_json::from_str::<Value>(content).unwrap())
            }
            _ => None,
        })
        .expect("the dangling call gets a result");
    assert!(result["error"].as_str().unwrap().contains("cancelled"));
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_during_a_provider_retry_ends_the_wait_at_once() {
    let busy = Reply::status(
        529,
        &[("retry-after", "30")],
        "anthropic/overloaded_error.json",
    );
    let (app, mut provider) = on_provider(vec![busy, Reply::sse("anthropic/text.sse")]).await;
    let (session, mut socket) = app.open_session().await;
    let started = std::time::Instant::now();
    app.say(&session, "hello").await;
    provider.received(1).await;
    stop(&app, &session).await;
    let events = socket.until_run_end().await;
    ends_cancelled(&events);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the stop did not wait out the provider's retry-after"
    );
    assert_eq!(provider.requests().len(), 1, "no retry after the stop");
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_while_idle_is_refused_and_changes_nothing() {
    let app = spawn_app_with(json!([{"text": "Hi."}]), &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "hello").await;
    socket.until_run_end().await;
    let before = app.log(&session).await;
    let (status, body) = app
        .post(&format!("/api/sessions/{session}/cancel"), json!({}))
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "idle");
    assert_eq!(app.log(&session).await, before);
}
