//! The `demo` engine: an offline, deterministic assistant that exercises every event.
//!
//! It reads the latest user message and the tool results since, picks a scenario by
//! phrase (see the README's table) and plays its next step: reasoning first, then text
//! and tool calls (the real `calculator` and `clock`, and `request_input` when a person
//! has to decide). Stateless: the step is the number of tool results since the message.
//! Continued after a stop, it writes the rest of the answer it was writing.

use std::time::Duration;

use serde_json::{json, Value};

use super::{
    stream_turn, Accepts, Engine, EngineInfo, EngineStream, ModelRequest, Turn, TurnToolCall,
};
use shared::usage::CallUsage;

use crate::agent::context::summary::{self, SummaryRequest};
use crate::agent::conversation::ChatMessage;

mod described;
mod notes;
mod plan;
mod python;
mod scenarios;

/// The demo assistant.
pub struct DemoEngine {
    delay: Duration,
}

impl DemoEngine {
    /// A demo engine pacing its deltas by `delay`.
    pub fn new(delay: Duration) -> Self {
        Self { delay }
    }
}

impl Engine for DemoEngine {
    fn info(&self) -> EngineInfo {
        EngineInfo {
            kind: "demo".into(),
            model: "Tandem demo model (offline)".into(),
        }
    }

    fn stream(&self, request: ModelRequest) -> EngineStream {
        let mut turn = next_turn(&request.conversation);
        turn.usage = Some(estimated_usage(&request.conversation, &turn));
        stream_turn(turn, self.delay)
    }

    /// The demo reads attachments as uploaded: it describes them, and scales nothing.
    fn accepts(&self) -> Accepts {
        Accepts {
            images: true,
            max_image_edge: crate::agent::attached::MAX_READ_EDGE,
            max_image_bytes: usize::MAX,
        }
    }

    fn summarise(&self, request: SummaryRequest) -> EngineStream {
        stream_turn(offline_summary(&request), Duration::ZERO)
    }
}

/// The offline engines' answer to a summary call: a deterministic summary.
pub(super) fn offline_summary(request: &SummaryRequest) -> Turn {
    Turn {
        text: Some(summary::offline(request)),
        ..Turn::default()
    }
}

/// Token counts the demo model reports: about four characters a token, as real models
/// count English, and a cost of zero (it is free), so the page's usage line has
/// something true to show offline.
fn estimated_usage(conversation: &[ChatMessage], turn: &Turn) -> CallUsage {
    let tokens = |text: &str| (text.chars().count() as u64).div_ceil(4);
    let input = conversation
        .iter()
        .map(|message| match message {
            ChatMessage::User { text, attachments } => {
                tokens(text)
                    + attachments
                        .iter()
                        .map(|a| a.estimated_tokens() as u64)
                        .sum::<u64>()
            }
            ChatMessage::Assistant {
                text, tool_calls, ..
            } => tokens(text) + tool_calls.iter().map(|c| tokens(&c.arguments)).sum::<u64>(),
            ChatMessage::Tool { content, .. } => tokens(content),
            ChatMessage::Continue => tokens(crate::agent::prompt::CONTINUE),
        })
        .sum();
    let reasoning = turn.reasoning.as_deref().map_or(0, tokens);
    let calls: u64 = turn
        .tool_calls
        .iter()
        .map(|call| tokens(&call.arguments.to_string()))
        .sum();
    CallUsage {
        provider: Some("demo".into()),
        model: Some("demo".into()),
        input_tokens: input,
        output_tokens: turn.text.as_deref().map_or(0, tokens) + reasoning + calls,
        reasoning_tokens: reasoning,
        cached_input_tokens: 0,
        cost_usd: Some(0.0),
        finish_reason: None,
        retries: 0,
    }
}

/// What the latest user message asked, and what its tools answered since.
pub(super) struct Situation<'a> {
    pub ask: &'a str,
    pub results: Vec<(&'a str, Value)>,
}

impl Situation<'_> {
    /// The payload of the `n`th result if it was an answered question.
    pub fn answer(&self, n: usize) -> Option<&Value> {
        let (_, result) = self.results.get(n)?;
        (result["status"] == "resolved").then(|| &result["payload"])
    }

    /// The `n`th result's value.
    pub fn result(&self, n: usize) -> &Value {
        self.results.get(n).map_or(&Value::Null, |(_, v)| v)
    }
}

/// Decides the next turn from the conversation.
pub fn next_turn(conversation: &[ChatMessage]) -> Turn {
    if let Some(rest) = continued(conversation) {
        return rest;
    }
    let start = conversation
        .iter()
        .rposition(|m| matches!(m, ChatMessage::User { .. }));
    let Some(start) = start else {
        return scenarios::greeting();
    };
    let ChatMessage::User { text, attachments } = &conversation[start] else {
        unreachable!("rposition found a user message")
    };
    if !attachments.is_empty() && start + 1 == conversation.len() {
        return described::attachments(attachments);
    }
    let results = conversation[start..]
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool { name, content, .. } => Some((
                name.as_str(),
                serde_json::from_str(content).unwrap_or(Value::Null),
            )),
            _ => None,
        })
        .collect();
    scenarios::play(&Situation { ask: text, results })
}

/// After Continue: the rest of the answer the person stopped (the turn the demo gives at
/// that point, less the text it had written), if the conversation ends so.
fn continued(conversation: &[ChatMessage]) -> Option<Turn> {
    let [before @ .., ChatMessage::Assistant { text: written, .. }, ChatMessage::Continue] =
        conversation
    else {
        return None;
    };
    let mut whole = next_turn(before);
    let rest = whole.text.as_deref()?.strip_prefix(written.as_str())?;
    whole.text = (!rest.is_empty()).then(|| rest.to_string());
    whole.reasoning = None;
    Some(whole)
}

/// A turn with reasoning, text and at most one tool call.
pub(super) fn turn(reasoning: &str, text: &str, call: Option<(&str, Value)>) -> Turn {
    Turn {
        reasoning: (!reasoning.is_empty()).then(|| reasoning.to_string()),
        text: (!text.is_empty()).then(|| text.to_string()),
        tool_calls: call
            .map(|(name, arguments)| TurnToolCall {
                name: name.into(),
                arguments,
            })
            .into_iter()
            .collect(),
        panic: None,
        usage: None,
        by_model: Default::default(),
    }
}

/// The arguments of a `request_input` call.
pub(super) fn ask(prompt: &str, kind: &str, extra: Value) -> (&'static str, Value) {
    let mut arguments = json!({"prompt": prompt, "kind": kind});
    if let (Some(target), Some(extra)) = (arguments.as_object_mut(), extra.as_object()) {
        target.extend(extra.clone());
    }
    ("request_input", arguments)
}

#[cfg(test)]
mod tests;
