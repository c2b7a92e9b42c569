//! The OpenAI-compatible engine against a local server replaying Chat Completions
//! fixtures (`tests/fixtures/openai/`): first the engine alone, then the whole app, where
//! its events must land in the log as valid AG-UI and its failures as the right
//! `RUN_ERROR` codes, never showing the API key.
//!
//! `engine` drives `OpenAiEngine` directly; `app` runs the real app with
//! `--engine openai`. This file holds what they share.

mod app;
mod context;
mod engine;
mod models;
mod prompt;

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{json, Value};
use shared::usage::CallUsage;
use shared::{Event, EventBody, Outcome};
use tandem::agent::conversation::ChatMessage;
use tandem::agent::engines::{
    Engine, EngineError, EngineEvent, FinishReason, ModelRequest, OpenAiEngine,
};
use tandem::config::ProviderSettings;
use tandem::config::RetryPolicy;

use crate::helpers::provider::{fixture, ProviderServer, Reply};
use crate::helpers::socket::interrupt_id;
use crate::helpers::{assert_valid_session, types, TestApp};

pub(super) const KEY: &str = "sk-test-123";

type Item = Result<EngineEvent, EngineError>;

pub(super) fn settings(server: &ProviderServer) -> ProviderSettings {
    ProviderSettings {
        base_url: format!("{}/v1", server.url),
        api_key: Some(KEY.parse().unwrap()),
        model: "gpt-4.1-mini".into(),
        temperature: None,
        max_tokens: 1024,
        thinking_budget: None,
        extra_headers: vec![("X-Team".into(), "tandem".into())],
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        },
    }
}

pub(super) fn hello() -> ModelRequest {
    ModelRequest {
        temperature: None,
        system: None,
        model: None,
        summary: None,
        conversation: vec![ChatMessage::user("Hi")],
        tools: vec![],
        model_call_index: 0,
    }
}

/// One engine call answered by `replies`: every item it streamed, and the server.
pub(super) async fn call(replies: Vec<Reply>) -> (Vec<Item>, ProviderServer) {
    let server = ProviderServer::start(replies).await;
    let engine = OpenAiEngine::new(settings(&server)).unwrap();
    let items = engine.stream(hello()).collect().await;
    (items, server)
}

pub(super) async fn events_of(reply: Reply) -> Vec<EngineEvent> {
    let (items, _) = call(vec![reply]).await;
    items.into_iter().map(|item| item.unwrap()).collect()
}

pub(super) fn failure(items: &[Item]) -> &EngineError {
    match items.last() {
        Some(Err(error)) => error,
        other => panic!("the call should fail last, got {other:?}"),
    }
}

pub(super) fn sse(name: &str, cut_after: Option<usize>, pace: Duration) -> Reply {
    Reply::Sse {
        body: fixture(name),
        split_every: None,
        pace,
        cut_after,
    }
}

/// The text, reasoning and arguments of each call, concatenated.
pub(super) fn joined(
    events: &[EngineEvent],
    pick: impl Fn(&EngineEvent) -> Option<&str>,
) -> String {
    events.iter().filter_map(pick).collect()
}

pub(super) fn text(events: &[EngineEvent]) -> String {
    joined(events, |e| match e {
        EngineEvent::TextDelta(delta) => Some(delta),
        _ => None,
    })
}

pub(super) fn reasoning(events: &[EngineEvent]) -> String {
    joined(events, |e| match e {
        EngineEvent::ReasoningDelta(delta) => Some(delta),
        _ => None,
    })
}

pub(super) fn arguments(events: &[EngineEvent], id: &str) -> Value {
    let text = joined(events, |e| match e {
        EngineEvent::ToolCallArgs { id: of, delta } if of == id => Some(delta),
        _ => None,
    });
    serde_json::from_str(&text).unwrap()
}

pub(super) fn position(events: &[EngineEvent], wanted: impl Fn(&EngineEvent) -> bool) -> usize {
    events.iter().position(wanted).expect("the event is there")
}
