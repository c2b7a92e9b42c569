//! Which tool calls of a rebuilt conversation still wait for a result, and the synthetic
//! error results that let every provider accept calls that never got one.

use std::collections::HashSet;

use super::{ChatMessage, ToolCallRecord};

/// The last assistant turn's calls without a result, unless a person wrote after it.
pub(super) fn pending_calls(messages: &[ChatMessage]) -> Vec<ToolCallRecord> {
    let mut answered = HashSet::new();
    for message in messages.iter().rev() {
        match message {
            ChatMessage::Tool { tool_call_id, .. } => {
                answered.insert(tool_call_id.as_str());
            }
            ChatMessage::User { .. } | ChatMessage::Continue => return Vec::new(),
            ChatMessage::Assistant { tool_calls, .. } => {
                return tool_calls
                    .iter()
                    .filter(|call| !answered.contains(call.id.as_str()))
                    .cloned()
                    .collect()
            }
        }
    }
    Vec::new()
}

/// Gives every tool call that has no result a synthetic error result, placed with the
/// other results of its turn, so providers that require an answer to every call accept
/// the history.
pub(super) fn answer_every_call(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    let answered: HashSet<String> = messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    let mut out = Vec::with_capacity(messages.len());
    let mut owed: Vec<ToolCallRecord> = Vec::new();
    for message in messages {
        if !matches!(message, ChatMessage::Tool { .. }) {
            pay(&mut out, &mut owed);
        }
        if let ChatMessage::Assistant { tool_calls, .. } = &message {
            owed.extend(
                tool_calls
                    .iter()
                    .filter(|c| !answered.contains(&c.id))
                    .cloned(),
            );
        }
        out.push(message);
    }
    pay(&mut out, &mut owed);
    out
}

fn pay(out: &mut Vec<ChatMessage>, owed: &mut Vec<ToolCallRecord>) {
    for call in owed.drain(..) {
        out.push(ChatMessage::Tool {
            tool_call_id: call.id,
            name: call.name,
            content: r#"{"error":"no result was recorded for this call (the run was stopped or interrupted before it finished)"}"#
                .into(),
        });
    }
}
