//! A scripted model turn (reasoning, text, tool calls) and its paced stream.
//!
//! Both offline engines decide a whole [`Turn`] at once and stream it word by word,
//! sleeping `delay` before each delta to read like a real model (zero in tests).

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::stream;
use serde::Deserialize;
use serde_json::Value;
use shared::usage::CallUsage;

use super::{EngineEvent, EngineStream, FinishReason};
use crate::domain::new_id;

/// One model turn; every part optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Turn {
    #[serde(default)]
    pub reasoning: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<TurnToolCall>,
    /// Panics with this message instead of finishing, once the rest is streamed: plays
    /// an engine bug, to
    /// show that a panicking run ends with `RUN_ERROR internal`.
    #[serde(default)]
    pub panic: Option<String>,
    /// The call's usage, reported before it finishes (the demo engine estimates one).
    #[serde(default)]
    pub usage: Option<CallUsage>,
    /// The turn instead of this one when the call names one of these models (the script
    /// engine's stand-in for models that answer differently).
    #[serde(default)]
    pub by_model: std::collections::BTreeMap<String, Turn>,
}

/// A tool call in a turn.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnToolCall {
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// Streams `turn`, pausing `delay` before each text, reasoning or argument delta.
pub fn stream_turn(turn: Turn, delay: Duration) -> EngineStream {
    let panic = turn.panic.clone();
    let events = events_of(turn);
    Box::pin(stream::unfold(events, move |mut events| {
        let panic = panic.clone();
        async move {
            let event = events.pop_front()?;
            if let (EngineEvent::Finish(_), Some(message)) = (&event, panic) {
                panic!("{message}");
            }
            let is_delta = matches!(
                event,
                EngineEvent::TextDelta(_)
                    | EngineEvent::ReasoningDelta(_)
                    | EngineEvent::ToolCallArgs { .. }
            );
            if is_delta && !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            Some((Ok(event), events))
        }
    }))
}

fn events_of(turn: Turn) -> VecDeque<EngineEvent> {
    let mut events = VecDeque::new();
    if let Some(reasoning) = &turn.reasoning {
        events.extend(words(reasoning).map(EngineEvent::ReasoningDelta));
    }
    if let Some(text) = &turn.text {
        events.extend(words(text).map(EngineEvent::TextDelta));
    }
    let finish = if turn.tool_calls.is_empty() {
        FinishReason::Stop
    } else {
        FinishReason::ToolCalls
    };
    for call in turn.tool_calls {
        let id = new_id("call");
        events.push_back(EngineEvent::ToolCallStart {
            id: id.clone(),
            name: call.name,
        });
        let arguments = call.arguments.to_string();
        for delta in pieces(&arguments, 3) {
            events.push_back(EngineEvent::ToolCallArgs {
                id: id.clone(),
                delta,
            });
        }
        events.push_back(EngineEvent::ToolCallEnd { id });
    }
    events.extend(turn.usage.map(EngineEvent::Usage));
    events.push_back(EngineEvent::Finish(finish));
    events
}

/// Splits text into words, each carrying the whitespace before it, so the deltas
/// concatenate back to the exact text.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let start = rest.len() - rest.trim_start().len();
        let end = rest[start..]
            .find(char::is_whitespace)
            .map_or(rest.len(), |i| start + i);
        let (word, tail) = rest.split_at(end);
        rest = tail;
        Some(word.to_string())
    })
}

/// Splits `text` into at most `count` pieces on character boundaries.
fn pieces(text: &str, count: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(count).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use serde_json::json;

    #[test]
    fn words_concatenate_to_the_text() {
        let text = "  Hello,  wide\nworld ";
        let parts: Vec<String> = words(text).collect();
        assert_eq!(parts.concat(), text);
        assert_eq!(parts[0], "  Hello,");
    }

    #[tokio::test]
    async fn a_turn_streams_reasoning_text_then_tools() {
        let turn = Turn {
            reasoning: Some("think".into()),
            text: Some("say it".into()),
            tool_calls: vec![TurnToolCall {
                name: "clock".into(),
                arguments: json!({"a": "ü"}),
            }],
            panic: None,
            usage: None,
            by_model: Default::default(),
        };
        let events: Vec<EngineEvent> = stream_turn(turn, Duration::ZERO)
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(events[0], EngineEvent::ReasoningDelta("think".into()));
        assert_eq!(events[1], EngineEvent::TextDelta("say".into()));
        let args: String = events
            .iter()
            .filter_map(|e| match e {
                EngineEvent::ToolCallArgs { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(args, r#"{"a":"ü"}"#);
        assert_eq!(
            events.last(),
            Some(&EngineEvent::Finish(FinishReason::ToolCalls))
        );
    }
}
