//! `--fallback-models` (issue 29, part 4): when the model called keeps failing before its
//! first token (a provider's 429s or 529s after the retries), the next model of the list
//! takes the call, recorded in the log (`CUSTOM tandem.model_fallback`), the request and
//! `/metrics`; a request the provider refuses as wrong, and a stream that breaks after
//! output began, do not fall back.

use std::time::Duration;

use serde_json::{json, Value};
use shared::{Event, EventBody};

use crate::helpers::provider::{fixture, ProviderServer, Reply};
use crate::helpers::{spawn_app_with, TestApp};

/// The log's `tandem.model_fallback` values.
fn fallbacks(log: &[(u64, Event)]) -> Vec<Value> {
    log.iter()
        .filter_map(|(_, event)| match &event.body {
            EventBody::Custom { name, value } if name == "tandem.model_fallback" => {
                Some(value.clone())
            }
            _ => None,
        })
        .collect()
}

async fn provider_app(engine: &str, server: &ProviderServer, extra: &[&str]) -> TestApp {
    let key = crate::helpers::key_file("sk-test-123");
    let base = match engine {
        "openai" => format!("{}/v1", server.url),
        _ => server.url.clone(),
    };
    let (url_flag, key_flag) = match engine {
        "openai" => ("--openai-base-url", "--openai-api-key-file"),
        _ => ("--anthropic-base-url", "--anthropic-api-key-file"),
    };
    let flags = [
        &["--engine", engine, url_flag, &base, key_flag, &key][..],
        &["--max-retries", "1", "--retry-base-ms", "1"],
        extra,
    ]
    .concat();
    spawn_app_with(json!([]), &flags).await
}

async fn run_once(app: &TestApp) -> (String, Vec<(u64, Event)>) {
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Hello").await;
    socket.until_run_end().await;
    let log = app.log(&session).await;
    (session, log)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_model_that_stays_overloaded_hands_the_call_to_the_next() {
    let busy = || Reply::status(529, &[], "anthropic/overloaded_error.json");
    let replies = vec![
        busy(),
        busy(),
        busy(),
        busy(),
        Reply::sse("anthropic/text.sse"),
    ];
    let server = ProviderServer::start(replies).await;
    let list = ["--fallback-models", "claude-b,claude-c"];
    let app = provider_app("anthropic", &server, &list).await;
    let (_, log) = run_once(&app).await;
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(
        models,
        [
            json!("claude-sonnet-4-5"),
            json!("claude-sonnet-4-5"),
            json!("claude-b"),
            json!("claude-b"),
            json!("claude-c")
        ],
        "each model gets its retries, then the next takes over"
    );
    let switched = fallbacks(&log);
    assert_eq!(switched.len(), 2, "{switched:?}");
    assert_eq!(
        (
            &switched[0]["from"],
            &switched[0]["to"],
            &switched[0]["code"]
        ),
        (
            &json!("claude-sonnet-4-5"),
            &json!("claude-b"),
            &json!("provider_unavailable")
        )
    );
    assert_eq!(
        (&switched[1]["from"], &switched[1]["to"]),
        (&json!("claude-b"), &json!("claude-c"))
    );
    assert!(matches!(
        log.last().unwrap().1.body,
        EventBody::RunFinished { .. }
    ));
    crate::helpers::assert_valid_session(&log, true);
    let metrics = app.metrics().await;
    assert!(
        metrics
            .contains("tandem_model_fallbacks_total{from=\"claude-sonnet-4-5\",to=\"claude-b\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_model_rate_limited_to_the_end_falls_back_and_the_last_failure_stands() {
    let limited = || Reply::status(429, &[("retry-after", "0")], "openai/rate_limit.json");
    let server =
        ProviderServer::start(vec![limited(), limited(), Reply::sse("openai/text.sse")]).await;
    let app = provider_app("openai", &server, &["--fallback-models", "gpt-4.1-nano"]).await;
    let (_, log) = run_once(&app).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].body["model"], "gpt-4.1-nano");
    assert_eq!(fallbacks(&log)[0]["code"], "rate_limited");

    // Every model of the list failing: the run ends with the last failure.
    let server = ProviderServer::start(vec![limited(); 4]).await;
    let app = provider_app("openai", &server, &["--fallback-models", "gpt-4.1-nano"]).await;
    let (_, log) = run_once(&app).await;
    assert_eq!(server.requests().len(), 4);
    match &log.last().unwrap().1.body {
        EventBody::RunError { code, .. } => assert_eq!(code.as_deref(), Some("rate_limited")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_request_and_a_stream_cut_after_output_do_not_fall_back() {
    let refused = Reply::status(400, &[], "openai/invalid_key.json");
    let server = ProviderServer::start(vec![refused]).await;
    let app = provider_app("openai", &server, &["--fallback-models", "gpt-4.1-nano"]).await;
    let (_, log) = run_once(&app).await;
    assert_eq!(server.requests().len(), 1);
    assert!(fallbacks(&log).is_empty());

    let cut = Reply::Sse {
        body: fixture("openai/text.sse"),
        split_every: None,
        pace: Duration::ZERO,
        cut_after: Some(4),
    };
    let server = ProviderServer::start(vec![cut]).await;
    let app = provider_app("openai", &server, &["--fallback-models", "gpt-4.1-nano"]).await;
    let (_, log) = run_once(&app).await;
    assert_eq!(server.requests().len(), 1, "what the person saw stays");
    assert!(fallbacks(&log).is_empty());
    match &log.last().unwrap().1.body {
        EventBody::RunError { code, .. } => {
            assert_eq!(code.as_deref(), Some("stream_interrupted"))
        }
        other => panic!("{other:?}"),
    }
}
