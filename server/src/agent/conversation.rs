//! The conversation a model sees, rebuilt from the session's event log.
//!
//! User messages, each model call's reasoning, text and tool calls (between the
//! `STEP_STARTED`/`STEP_FINISHED` of `model_call`), and tool results (including a
//! person's answers) become [`ChatMessage`]s. A tool call without a result, which only a
//! crash can leave, gets a synthetic error result so every provider accepts the history.

use std::collections::{HashMap, HashSet};

use shared::{Event, EventBody, TextRole};

/// The step name Tandem wraps each model call in.
pub const MODEL_CALL_STEP: &str = "model_call";

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRecord {
    pub id: String,
    pub name: String,
    /// The JSON arguments as the model wrote them.
    pub arguments: String,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    User {
        text: String,
    },
    Assistant {
        reasoning: String,
        text: String,
        tool_calls: Vec<ToolCallRecord>,
    },
    Tool {
        tool_call_id: String,
        name: String,
        content: String,
    },
}

/// The conversation and how many model calls produced it.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct History {
    pub messages: Vec<ChatMessage>,
    pub model_calls: u64,
}

/// Rebuilds the conversation from a session's whole log.
pub fn rebuild<'a>(events: impl IntoIterator<Item = &'a Event>) -> History {
    let mut fold = Fold::default();
    for event in events {
        fold.observe(&event.body);
    }
    fold.history.messages = answer_every_call(fold.history.messages);
    fold.history
}

#[derive(Default)]
struct Fold {
    history: History,
    user: Option<(String, String)>,
    assistant: Option<(String, String, Vec<ToolCallRecord>)>,
    tool_names: HashMap<String, String>,
}

impl Fold {
    fn observe(&mut self, body: &EventBody) {
        match body {
            EventBody::TextMessageStart {
                message_id,
                role: Some(TextRole::User),
                ..
            } => self.user = Some((message_id.clone(), String::new())),
            EventBody::TextMessageContent { message_id, delta } => {
                match (&mut self.user, &mut self.assistant) {
                    (Some((id, text)), _) if id == message_id => text.push_str(delta),
                    (_, Some((_, text, _))) => text.push_str(delta),
                    _ => {}
                }
            }
            EventBody::TextMessageEnd { message_id }
                if self.user.as_ref().is_some_and(|(id, _)| id == message_id) =>
            {
                let (_, text) = self.user.take().expect("checked by the guard");
                self.history.messages.push(ChatMessage::User { text });
            }
            EventBody::StepStarted { step_name } if step_name == MODEL_CALL_STEP => {
                self.history.model_calls += 1;
                self.assistant = Some(Default::default());
            }
            EventBody::StepFinished { step_name } if step_name == MODEL_CALL_STEP => {
                self.finish_assistant()
            }
            EventBody::ReasoningMessageContent { delta, .. } => {
                if let Some((reasoning, _, _)) = &mut self.assistant {
                    reasoning.push_str(delta);
                }
            }
            EventBody::ToolCallStart {
                tool_call_id,
                tool_call_name,
                ..
            } => {
                self.tool_names
                    .insert(tool_call_id.clone(), tool_call_name.clone());
                if let Some((_, _, calls)) = &mut self.assistant {
                    calls.push(ToolCallRecord {
                        id: tool_call_id.clone(),
                        name: tool_call_name.clone(),
                        arguments: String::new(),
                    });
                }
            }
            EventBody::ToolCallArgs {
                tool_call_id,
                delta,
            } => {
                let calls = self.assistant.as_mut().map(|(_, _, calls)| calls);
                if let Some(call) = calls.and_then(|c| c.iter_mut().find(|c| &c.id == tool_call_id))
                {
                    call.arguments.push_str(delta);
                }
            }
            EventBody::ToolCallResult {
                tool_call_id,
                content,
                ..
            } => {
                self.finish_assistant();
                self.history.messages.push(ChatMessage::Tool {
                    tool_call_id: tool_call_id.clone(),
                    name: self
                        .tool_names
                        .get(tool_call_id)
                        .cloned()
                        .unwrap_or_default(),
                    content: content.clone(),
                });
            }
            EventBody::RunError { .. } | EventBody::RunFinished { .. } => self.finish_assistant(),
            _ => {}
        }
    }

    fn finish_assistant(&mut self) {
        if let Some((reasoning, text, tool_calls)) = self.assistant.take() {
            if !(reasoning.is_empty() && text.is_empty() && tool_calls.is_empty()) {
                self.history.messages.push(ChatMessage::Assistant {
                    reasoning,
                    text,
                    tool_calls,
                });
            }
        }
    }
}

/// Gives every tool call that has no result a synthetic error result, placed with the
/// other results of its turn, so providers that require an answer to every call accept
/// the history.
fn answer_every_call(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
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
            content:
                r#"{"error":"no result was recorded for this call (the run was interrupted)"}"#
                    .into(),
        });
    }
}

#[cfg(test)]
mod tests;
