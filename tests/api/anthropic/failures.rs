//! `AnthropicEngine` when things go wrong: retries before the first token, refusals,
//! streams that break, and a caller that stops reading.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tandem::agent::engines::{AnthropicEngine, Engine, EngineEvent, FinishReason};

use super::{collect, say, settings, text_of, KEY};
use crate::helpers::provider::{fixture, ProviderServer, Reply};

fn finish(events: &[EngineEvent]) -> Option<&FinishReason> {
    match events.last() {
        Some(EngineEvent::Finish(reason)) => Some(reason),
        _ => None,
    }
}

#[tokio::test]
async fn a_429_waits_for_retry_after_then_succeeds() {
    let limited = Reply::status(429, &[("retry-after", "1")], "anthropic/rate_limit.json");
    let server = ProviderServer::start(vec![limited, Reply::sse("anthropic/text.sse")]).await;
    let started = Instant::now();
    let (events, error) = collect(settings(&server.url), say("hi")).await;
    assert_eq!(error, None);
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "retry-after is honoured"
    );
    assert_eq!(finish(&events), Some(&FinishReason::Stop));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn overloaded_and_server_errors_are_retried() {
    let server = ProviderServer::start(vec![
        Reply::status(529, &[], "anthropic/overloaded_error.json"),
        Reply::status(500, &[], "anthropic/api_error.json"),
        Reply::sse("anthropic/text.sse"),
    ])
    .await;
    let (events, error) = collect(settings(&server.url), say("hi")).await;
    assert_eq!(error, None);
    assert!(!text_of(&events).is_empty());
    assert_eq!(server.requests().len(), 3);
    let bodies: Vec<_> = server.requests().into_iter().map(|r| r.body).collect();
    assert!(
        bodies.windows(2).all(|w| w[0] == w[1]),
        "retries resend the same body"
    );
}

#[tokio::test]
async fn refusals_and_exhausted_retries_fail_without_the_key() {
    let auth = Reply::status(401, &[], "anthropic/authentication_error.json");
    let server = ProviderServer::start(vec![auth]).await;
    let (_, error) = collect(settings(&server.url), say("hi")).await;
    let error = error.expect("a 401 fails");
    assert_eq!(error.code, "provider_auth");
    assert!(error.message.contains("authentication_error"), "{error}");
    assert!(!error.message.contains(KEY), "{error}");
    assert_eq!(server.requests().len(), 1, "a 401 is not retried");

    let busy = Reply::status(529, &[], "anthropic/overloaded_error.json");
    let server = ProviderServer::start(vec![busy; 4]).await;
    let (_, error) = collect(settings(&server.url), say("hi")).await;
    let error = error.expect("retries run out");
    assert_eq!(error.code, "provider_unavailable");
    assert!(
        error.message.contains("529") && error.message.contains("Overloaded"),
        "{error}"
    );
}

#[tokio::test]
async fn stream_failures_have_their_own_codes() {
    let cut = Reply::Sse {
        body: fixture("anthropic/text.sse"),
        split_every: None,
        pace: Duration::ZERO,
        cut_after: Some(4),
    };
    let cases = [
        (cut, "stream_interrupted"),
        (Reply::sse("anthropic/error_event.sse"), "provider_error"),
        (Reply::sse("anthropic/malformed.sse"), "malformed_response"),
    ];
    for (reply, code) in cases {
        let server = ProviderServer::start(vec![reply]).await;
        let (events, error) = collect(settings(&server.url), say("hi")).await;
        let error = error.unwrap_or_else(|| panic!("{code}: the call must fail"));
        assert_eq!(error.code, code, "{error}");
        assert!(
            !text_of(&events).is_empty(),
            "{code}: text before the failure streams"
        );
        assert_eq!(finish(&events), None, "{code}: no clean finish");
        assert!(!error.message.contains(KEY));
        assert_eq!(
            server.requests().len(),
            1,
            "{code}: not retried after the first token"
        );
    }
}

#[tokio::test]
async fn dropping_the_stream_hangs_up_on_the_provider() {
    let slow = Reply::Sse {
        body: fixture("anthropic/long_text.sse"),
        split_every: None,
        pace: Duration::from_millis(20),
        cut_after: None,
    };
    let mut server = ProviderServer::start(vec![slow]).await;
    let engine = AnthropicEngine::new(settings(&server.url)).unwrap();
    let mut stream = engine.stream(say("talk"));
    let first = stream.next().await.expect("an event").expect("no error");
    assert!(matches!(first, EngineEvent::TextDelta(_)));
    drop(stream);
    let sent = server.client_hung_up().await;
    assert!(sent < 40, "the server stopped early ({sent} chunks sent)");
}
