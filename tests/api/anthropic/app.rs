//! The real app with `--engine anthropic` against the fixture server: what reaches the
//! log, what the next call sends back, and how failures end a run.

use std::time::Duration;

use serde_json::{json, Value};
use shared::{Event, EventBody, Outcome};

use super::{assert_well_formed, KEY};
use crate::helpers::provider::{fixture, ProviderServer, Reply};
use crate::helpers::socket::interrupt_id;
use crate::helpers::{assert_valid_session, key_file, spawn_app_with, types, TestApp};

const SIGNATURE: &str = "EqQBCkYIBxgCKkCb8v3m0kX7Lk1kZ2l2ZW4gYSBzaWduYXR1cmUgZm9yIHRoZSB0aGlua2luZyBibG9jaxIMdGFuZGVtLXRlc3QaDGxvY2FsLWZpeHR1cmU=";

/// The app on the Anthropic engine at `server`, with more flags.
async fn app_for(server: &ProviderServer, extra: &[&str]) -> TestApp {
    let key = key_file(KEY);
    let mut flags = vec![
        "--engine",
        "anthropic",
        "--anthropic-base-url",
        &server.url,
        "--anthropic-api-key-file",
        &key,
        "--retry-base-ms",
        "10",
    ];
    flags.extend_from_slice(extra);
    spawn_app_with(json!([]), &flags).await
}

fn encrypted_values(log: &[(u64, Event)]) -> Vec<String> {
    log.iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::ReasoningEncryptedValue {
                encrypted_value, ..
            } => Some(encrypted_value.clone()),
            _ => None,
        })
        .collect()
}

fn results(log: &[(u64, Event)]) -> Vec<Value> {
    log.iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::ToolCallResult { content, .. } => serde_json::from_str(content).ok(),
            _ => None,
        })
        .collect()
}

fn succeeded(events: &[(u64, Event)]) -> bool {
    matches!(
        &events.last().expect("events").1.body,
        EventBody::RunFinished {
            outcome: Some(Outcome::Success { .. }),
            ..
        }
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_is_logged_with_its_signature_and_sent_back_next_call() {
    let server = ProviderServer::start(vec![
        Reply::sse("anthropic/thinking.sse"),
        Reply::sse("anthropic/text.sse"),
    ])
    .await;
    let app = app_for(&server, &["--thinking-budget", "2048"]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "27 * 453?").await;
    let events = socket.until_run_end().await;
    assert!(succeeded(&events));
    let names = types(&events);
    let first = |name: &str| names.iter().position(|n| *n == name).unwrap();
    let last = |name: &str| names.iter().rposition(|n| *n == name).unwrap();
    assert!(first("REASONING_START") < first("REASONING_ENCRYPTED_VALUE"));
    assert!(first("REASONING_ENCRYPTED_VALUE") < first("REASONING_MESSAGE_END"));
    assert!(first("REASONING_END") < last("TEXT_MESSAGE_START"));
    assert_eq!(encrypted_values(&events), [SIGNATURE]);

    app.say(&session, "thanks").await;
    assert!(succeeded(&socket.until_run_end().await));
    let sent = &server.requests()[1].body;
    assert_well_formed(&sent["messages"]);
    let reasoning = &sent["messages"][1]["content"][0];
    assert_eq!(reasoning["type"], "thinking");
    assert_eq!(reasoning["signature"], SIGNATURE);
    assert!(reasoning["thinking"]
        .as_str()
        .unwrap()
        .ends_with("Total 12231."));
    assert_eq!(
        sent["messages"][1]["content"][1]["text"],
        "27 * 453 = 12,231."
    );
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redacted_thinking_is_kept_encrypted_and_sent_back() {
    let server = ProviderServer::start(vec![
        Reply::sse("anthropic/redacted_thinking.sse"),
        Reply::sse("anthropic/text.sse"),
    ])
    .await;
    let app = app_for(&server, &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "hi").await;
    let events = socket.until_run_end().await;
    let values = encrypted_values(&events);
    assert!(values[0].starts_with("redacted:EmwKAhgB"), "{values:?}");
    assert_eq!(values[1], SIGNATURE);
    app.say(&session, "more").await;
    socket.until_run_end().await;
    let content = &server.requests()[1].body["messages"][1]["content"];
    assert_eq!(content[0]["type"], "redacted_thinking");
    assert_eq!(
        content[0]["data"],
        values[0].trim_start_matches("redacted:")
    );
    assert_eq!(content[1]["signature"], SIGNATURE);
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_then_a_question_then_the_answer_keep_the_history_valid() {
    let server = ProviderServer::start(vec![
        Reply::sse("anthropic/thinking_tool_use.sse"),
        Reply::sse("anthropic/request_input.sse"),
        Reply::sse("anthropic/text.sse"),
    ])
    .await;
    let app = app_for(&server, &["--thinking-budget", "2048"]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "6*7, then greet me").await;
    let paused = socket.until_run_end().await;
    assert_eq!(results(&paused)[0]["result"], 42);
    let id = interrupt_id(&paused);
    socket
        .send(json!({"kind": "resume", "interruptId": id, "status": "resolved", "payload": {"text": "Ada"}}))
        .await;
    assert!(succeeded(&socket.until_run_end().await));

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for sent in &requests {
        assert_well_formed(&sent.body["messages"]);
    }
    let messages = &requests[2].body["messages"];
    assert_eq!(messages.as_array().unwrap().len(), 5);
    assert_eq!(messages[1]["content"][0]["type"], "thinking");
    assert_eq!(messages[3]["content"][0]["type"], "thinking");
    assert_eq!(
        messages[3]["content"][2]["input"],
        json!({"prompt": "What is your name?", "kind": "text"})
    );
    let answer: Value =
        serde_json::from_str(messages[4]["content"][0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(answer["payload"]["text"], "Ada");
    let log = app.log(&session).await;
    for name in [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "REASONING_ENCRYPTED_VALUE",
    ] {
        assert!(types(&log).contains(&name), "{name} is logged");
    }
    assert_valid_session(&log, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tool_calls_run_and_both_results_go_back_together() {
    let server = ProviderServer::start(vec![
        Reply::sse("anthropic/two_tool_uses.sse"),
        Reply::sse("anthropic/text.sse"),
    ])
    .await;
    let beta = "anthropic-beta: token-efficient-tools-2025-02-19";
    let app = app_for(&server, &["--extra-header", beta]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "time and 6*7").await;
    let events = socket.until_run_end().await;
    assert!(succeeded(&events));
    assert_eq!(results(&events).len(), 2);
    for sent in server.requests() {
        assert_eq!(sent.header("x-api-key"), Some(KEY));
        assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(
            sent.header("anthropic-beta"),
            Some("token-efficient-tools-2025-02-19")
        );
    }
    let messages = &server.requests()[1].body["messages"];
    assert_well_formed(messages);
    assert_eq!(messages.as_array().unwrap().len(), 3);
    assert_valid_session(&app.log(&session).await, true);
}

/// Sends one message that must fail; returns the app, the session and the error's code
/// and message (checked for the key and a valid log).
async fn failed_run(server: &ProviderServer, extra: &[&str]) -> (TestApp, String, String, String) {
    let app = app_for(server, extra).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "hi").await;
    let events = socket.until_run_end().await;
    let (code, message) = match &events.last().unwrap().1.body {
        EventBody::RunError { code, message } => {
            (code.clone().unwrap_or_default(), message.clone())
        }
        other => panic!("expected RUN_ERROR, got {other:?}"),
    };
    assert!(!message.contains(KEY), "the key leaked: {message}");
    assert_valid_session(&app.log(&session).await, true);
    (app, session, code, message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_failures_end_the_run_with_their_codes() {
    let cut = Reply::Sse {
        body: fixture("anthropic/text.sse"),
        split_every: None,
        pace: Duration::ZERO,
        cut_after: Some(4),
    };
    let limited = Reply::status(429, &[("retry-after", "1")], "anthropic/rate_limit.json");
    let cases = [
        (cut, "stream_interrupted", vec![]),
        (
            Reply::sse("anthropic/malformed.sse"),
            "malformed_response",
            vec![],
        ),
        (
            Reply::sse("anthropic/error_event.sse"),
            "provider_error",
            vec![],
        ),
        (limited, "rate_limited", vec!["--max-retries", "0"]),
    ];
    for (reply, expected, extra) in cases {
        let server = ProviderServer::start(vec![reply]).await;
        let (_, _, code, message) = failed_run(&server, &extra).await;
        assert_eq!(code, expected, "{message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cut_after_its_tool_use_is_answered_for_the_model_next_time() {
    let body = fixture("anthropic/tool_use.sse");
    let before_message_end = body.matches("\n\n").count() - 2;
    let cut = Reply::Sse {
        body,
        split_every: None,
        pace: Duration::ZERO,
        cut_after: Some(before_message_end),
    };
    let server = ProviderServer::start(vec![cut, Reply::sse("anthropic/text.sse")]).await;
    let (app, session, code, _) = failed_run(&server, &[]).await;
    assert_eq!(code, "stream_interrupted");
    let mut socket = app.socket(&session, 0).await;
    socket.backlog().await;
    app.say(&session, "try again").await;
    assert!(succeeded(&socket.until_run_end().await));
    let messages = &server.requests()[1].body["messages"];
    assert_well_formed(messages);
    let retry = &messages[2]["content"];
    assert_eq!(retry[0]["tool_use_id"], "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
    assert_eq!(retry[0]["is_error"], true);
    assert_eq!(retry[1], json!({"type": "text", "text": "try again"}));
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_during_a_slow_stream_hangs_up_on_the_provider() {
    let slow = Reply::Sse {
        body: fixture("anthropic/long_text.sse"),
        split_every: None,
        pace: Duration::from_millis(20),
        cut_after: None,
    };
    let mut server = ProviderServer::start(vec![slow]).await;
    let app = app_for(&server, &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "talk").await;
    // The model's text, not the person's message: wait past the step start.
    socket.until(|e| e.type_name() == "STEP_STARTED").await;
    socket
        .until(|e| e.type_name() == "TEXT_MESSAGE_CONTENT")
        .await;
    socket.send(json!({"kind": "cancel"})).await;
    let events = socket.until_run_end().await;
    assert!(matches!(
        &events.last().unwrap().1.body,
        EventBody::RunFinished {
            outcome: Some(Outcome::Cancelled),
            ..
        }
    ));
    let sent = server.client_hung_up().await;
    assert!(sent < 40, "the stream was cut short ({sent} chunks sent)");
    assert_valid_session(&app.log(&session).await, true);
}
