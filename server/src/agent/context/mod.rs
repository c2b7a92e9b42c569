//! The model's context window: what of a long conversation one model call sends.
//!
//! The log keeps everything; a call sends the newest whole turns that fit the budget of
//! the model it calls ([`policy`]: an override of that model's, `--context-tokens`, or the
//! model's known window less `--max-tokens`). A turn is a
//! person's message and everything after it up to the next one, so a tool call always
//! travels with its result and the conversation still starts with the person. The latest
//! turn is always sent. When the oldest turn sent changes, the run records
//! `CUSTOM tandem.context_trimmed` so the page can mark where the model's view begins.
//!
//! Sizes are estimated (UTF-8 bytes / 4, plus a few tokens per message): providers count
//! differently, and an estimate that errs a little keeps this free of a tokenizer per
//! provider.
//!
//! With `--context-strategy summarise` the turns left out are summarised by one model
//! call ([`summary`]) and the summary travels ahead of the kept turns.

pub mod policy;
pub mod summary;

use serde_json::json;
use shared::EventBody;

use super::conversation::{ChatMessage, ReasoningBlock};
use super::tools::ToolSpec;

/// Tokens a message costs beyond its text (role, separators).
const PER_MESSAGE: usize = 4;

/// What a call sends of the conversation.
#[derive(Debug, PartialEq)]
pub struct Fitted {
    pub messages: Vec<ChatMessage>,
    /// How many of the conversation's messages were left out (the oldest).
    pub dropped: usize,
    /// The estimated size of what is sent, system prompt and tools included.
    pub estimated_tokens: usize,
}

/// The newest whole turns of `messages` that fit `budget` tokens next to the system
/// prompt and the tools; everything when `budget` is `None`.
pub fn fit(
    messages: Vec<ChatMessage>,
    budget: Option<usize>,
    system: Option<&str>,
    tools: &[ToolSpec],
) -> Fitted {
    let fixed = system.map_or(0, estimate_text)
        + tools
            .iter()
            .map(|t| estimate_text(&t.description) + estimate_text(&t.parameters.to_string()))
            .sum::<usize>();
    let sizes: Vec<usize> = messages.iter().map(estimate).collect();
    let total = fixed + sizes.iter().sum::<usize>();
    let Some(budget) = budget.filter(|budget| total > *budget) else {
        return Fitted {
            messages,
            dropped: 0,
            estimated_tokens: total,
        };
    };
    let starts: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, ChatMessage::User { .. }))
        .map(|(i, _)| i)
        .collect();
    // The earliest turn start whose suffix fits; the latest turn always goes.
    let latest = starts.last().copied().unwrap_or(0);
    let keep_from = starts
        .iter()
        .copied()
        .find(|&start| fixed + sizes[start..].iter().sum::<usize>() <= budget)
        .unwrap_or(latest);
    let estimated_tokens = fixed + sizes[keep_from..].iter().sum::<usize>();
    let mut messages = messages;
    let kept = messages.split_off(keep_from);
    Fitted {
        messages: kept,
        dropped: keep_from,
        estimated_tokens,
    }
}

/// The event that says where the model's view now begins: the `user_index`-th person's
/// message of the session (0 for the first), after `dropped` messages left out.
pub fn trimmed_event(
    user_index: usize,
    dropped: usize,
    budget: usize,
    estimated: usize,
) -> EventBody {
    EventBody::Custom {
        name: shared::custom::CONTEXT_TRIMMED.into(),
        value: json!({
            "firstUserMessage": user_index,
            "droppedMessages": dropped,
            "budgetTokens": budget,
            "estimatedTokens": estimated,
        }),
    }
}

/// How many of `messages`' first `dropped` are the person's.
pub fn users_in(messages: &[ChatMessage], dropped: usize) -> usize {
    messages[..dropped.min(messages.len())]
        .iter()
        .filter(|m| matches!(m, ChatMessage::User { .. }))
        .count()
}

/// Where the person's `n`-th message (0 for the first) stands in `messages`; the end when
/// there are fewer.
pub fn user_position(messages: &[ChatMessage], n: usize) -> usize {
    messages
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, ChatMessage::User { .. }))
        .nth(n)
        .map_or(messages.len(), |(at, _)| at)
}

/// The context window of models Tandem knows, in tokens, by name prefix.
pub fn known_window(model: &str) -> Option<usize> {
    const WINDOWS: [(&str, usize); 9] = [
        ("gpt-4.1", 1_047_576),
        ("gpt-5", 400_000),
        ("gpt-4o", 128_000),
        ("o1", 200_000),
        ("o3", 200_000),
        ("o4", 200_000),
        ("claude-", 200_000),
        ("llama3", 8_192),
        ("qwen", 32_768),
    ];
    WINDOWS
        .iter()
        .find(|(prefix, _)| model.starts_with(prefix))
        .map(|(_, window)| *window)
}

fn estimate(message: &ChatMessage) -> usize {
    PER_MESSAGE
        + match message {
            ChatMessage::User { text, attachments } => {
                estimate_text(text)
                    + attachments
                        .iter()
                        .map(|a| a.estimated_tokens())
                        .sum::<usize>()
            }
            ChatMessage::Tool { content, .. } => estimate_text(content),
            ChatMessage::Continue => estimate_text(crate::agent::prompt::CONTINUE),
            ChatMessage::Assistant {
                reasoning,
                text,
                tool_calls,
            } => {
                let reasoning: usize = reasoning
                    .iter()
                    .map(|block| match block {
                        ReasoningBlock::Thinking { text, signature } => {
                            estimate_text(text) + signature.as_deref().map_or(0, estimate_text)
                        }
                        ReasoningBlock::Redacted { data } => estimate_text(data),
                    })
                    .sum();
                let calls: usize = tool_calls
                    .iter()
                    .map(|c| PER_MESSAGE + estimate_text(&c.name) + estimate_text(&c.arguments))
                    .sum();
                reasoning + estimate_text(text) + calls
            }
        }
}

fn estimate_text(text: &str) -> usize {
    text.len().div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::conversation::ToolCallRecord;

    fn user(text: &str) -> ChatMessage {
        ChatMessage::user(text)
    }

    fn turn_with_tool(n: usize) -> Vec<ChatMessage> {
        vec![
            user(&format!("question {n} {}", "x".repeat(400))),
            ChatMessage::Assistant {
                reasoning: vec![],
                text: String::new(),
                tool_calls: vec![ToolCallRecord {
                    id: format!("c{n}"),
                    name: "calculator".into(),
                    arguments: "{}".into(),
                }],
            },
            ChatMessage::Tool {
                tool_call_id: format!("c{n}"),
                name: "calculator".into(),
                content: "y".repeat(400),
            },
            ChatMessage::Assistant {
                reasoning: vec![],
                text: "answer".into(),
                tool_calls: vec![],
            },
        ]
    }

    #[test]
    fn the_newest_whole_turns_that_fit_are_sent() {
        let messages: Vec<ChatMessage> = (0..5).flat_map(turn_with_tool).collect();
        let all = fit(messages.clone(), None, Some("system"), &[]);
        assert_eq!((all.dropped, all.messages.len()), (0, 20));
        let fitted = fit(messages.clone(), Some(600), Some("system"), &[]);
        assert_eq!(fitted.dropped % 4, 0, "whole turns only");
        assert!(fitted.dropped > 0 && fitted.estimated_tokens <= 600);
        assert!(matches!(fitted.messages[0], ChatMessage::User { .. }));
        assert_eq!(users_in(&messages, fitted.dropped), fitted.dropped / 4);
        assert_eq!(user_position(&messages, fitted.dropped / 4), fitted.dropped);
        assert_eq!(user_position(&messages, 9), messages.len());
        let tiny = fit(messages, Some(10), None, &[]);
        assert_eq!(tiny.messages.len(), 4, "the latest turn always goes, whole");
    }

    #[test]
    fn known_models_have_windows() {
        assert_eq!(known_window("claude-sonnet-4-5"), Some(200_000));
        assert_eq!(known_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(known_window("my-local-model"), None);
    }
}
