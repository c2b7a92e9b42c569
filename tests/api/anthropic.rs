//! The Anthropic engine against a local server that speaks the Messages API wire format
//! (fixtures in `tests/fixtures/anthropic/`, each citing the documentation it follows).
//!
//! `engine` and `failures` drive `AnthropicEngine` directly and check its `EngineEvent`s
//! and requests; `app` runs the real app with `--engine anthropic` and checks the log.
//! This file holds what they share: settings, stream collection and the request check.

mod app;
mod context;
mod engine;
mod failures;

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tandem::agent::conversation::ChatMessage;
use tandem::agent::engines::{AnthropicEngine, Engine, EngineError, EngineEvent, ModelRequest};
use tandem::agent::tools::request_input;
use tandem::config::ProviderSettings;
use tandem::config::RetryPolicy;

/// The API key every test uses; it must never show in an error.
pub const KEY: &str = "sk-ant-test";
/// The extra header every engine-level test sends.
pub const BETA: (&str, &str) = ("anthropic-beta", "interleaved-thinking-2025-05-14");
/// Longest a whole model call may take before the test fails.
const CALL_DEADLINE: Duration = Duration::from_secs(20);

/// Settings for a fixture server at `url`: fast retries, one extra header.
pub fn settings(url: &str) -> ProviderSettings {
    ProviderSettings {
        base_url: url.into(),
        api_key: Some(KEY.parse().unwrap()),
        model: "claude-sonnet-4-5".into(),
        temperature: Some(0.5),
        max_tokens: 1024,
        thinking_budget: None,
        extra_headers: vec![(BETA.0.into(), BETA.1.into())],
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(20),
        retry: RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        },
    }
}

/// A request with these messages and the `request_input` tool.
pub fn request(conversation: Vec<ChatMessage>) -> ModelRequest {
    ModelRequest {
        temperature: None,
        system: None,
        model: None,
        summary: None,
        conversation,
        tools: vec![request_input::spec()],
        model_call_index: 0,
    }
}

/// A one-message request.
pub fn say(text: &str) -> ModelRequest {
    request(vec![ChatMessage::user(text)])
}

/// Runs one call to its end: the events, and the error it ended with if any.
pub async fn collect(
    settings: ProviderSettings,
    request: ModelRequest,
) -> (Vec<EngineEvent>, Option<EngineError>) {
    let engine = AnthropicEngine::new(settings).expect("the client builds");
    let mut stream = engine.stream(request);
    let mut events = Vec::new();
    let read = async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => events.push(event),
                Err(error) => return Some(error),
            }
        }
        None
    };
    let error = tokio::time::timeout(CALL_DEADLINE, read)
        .await
        .expect("the call ends in time");
    (events, error)
}

/// The text of the `TextDelta`s.
pub fn text_of(events: &[EngineEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            EngineEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn block_kinds(content: &Value) -> Vec<&str> {
    content
        .as_array()
        .expect("content is a list of blocks")
        .iter()
        .map(|block| block["type"].as_str().expect("a block type"))
        .collect()
}

fn ids<'a>(content: &'a Value, kind: &str, field: &str) -> Vec<&'a str> {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == kind)
        .map(|block| block[field].as_str().expect("an id"))
        .collect()
}

/// Checks the API's rules on `messages`: roles alternate from `user`, no message is
/// empty, thinking blocks come first with their signatures, and every `tool_use` has a
/// `tool_result` at the start of the next (user) message.
pub fn assert_well_formed(messages: &Value) {
    let messages = messages.as_array().expect("messages is a list");
    for (index, message) in messages.iter().enumerate() {
        let role = if index % 2 == 0 { "user" } else { "assistant" };
        assert_eq!(message["role"], role, "message {index}: roles alternate");
        let kinds = block_kinds(&message["content"]);
        assert!(!kinds.is_empty(), "message {index} is empty");
        let thinking = kinds.iter().take_while(|k| k.ends_with("thinking")).count();
        assert!(
            kinds[thinking..].iter().all(|k| !k.ends_with("thinking")),
            "message {index}: thinking comes first: {kinds:?}"
        );
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "thinking" {
                let signature = block["signature"].as_str().unwrap_or_default();
                assert!(!signature.is_empty(), "message {index}: unsigned thinking");
            }
        }
        let uses = ids(&message["content"], "tool_use", "id");
        if uses.is_empty() {
            continue;
        }
        let next = &messages
            .get(index + 1)
            .expect("tool_use is answered in the next message")["content"];
        let results = ids(next, "tool_result", "tool_use_id");
        assert_eq!(results, uses, "message {index}: every tool_use answered");
        let next_kinds = block_kinds(next);
        assert!(
            next_kinds[..results.len()]
                .iter()
                .all(|k| *k == "tool_result"),
            "tool results come first: {next_kinds:?}"
        );
    }
}
