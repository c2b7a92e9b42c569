//! What a run has opened and not yet closed, so an abnormal end (stop, failure, crash
//! recovery) can close everything and leave a log that passes AG-UI's ordering rules.

use serde_json::json;
use shared::{EventBody, ToolRole};

use crate::domain::new_id;

/// Open messages, reasoning, tool calls and steps of one run.
#[derive(Debug, Default, Clone)]
pub struct OpenItems {
    text: Option<String>,
    reasoning_span: Option<String>,
    reasoning_message: Option<String>,
    tool_calls: Vec<String>,
    unanswered: Vec<String>,
    steps: Vec<String>,
}

impl OpenItems {
    /// Whether an event only adds content (a delta) and so opens or closes nothing.
    pub fn is_content(body: &EventBody) -> bool {
        matches!(
            body,
            EventBody::TextMessageContent { .. }
                | EventBody::ReasoningMessageContent { .. }
                | EventBody::ToolCallArgs { .. }
        )
    }

    /// Tracks one committed event.
    pub fn observe(&mut self, body: &EventBody) {
        match body {
            EventBody::RunStarted { .. } => *self = Self::default(),
            EventBody::TextMessageStart { message_id, .. } => self.text = Some(message_id.clone()),
            EventBody::TextMessageEnd { .. } => self.text = None,
            EventBody::ReasoningStart { message_id } => {
                self.reasoning_span = Some(message_id.clone())
            }
            EventBody::ReasoningEnd { .. } => self.reasoning_span = None,
            EventBody::ReasoningMessageStart { message_id, .. } => {
                self.reasoning_message = Some(message_id.clone())
            }
            EventBody::ReasoningMessageEnd { .. } => self.reasoning_message = None,
            EventBody::ToolCallStart { tool_call_id, .. } => {
                self.tool_calls.push(tool_call_id.clone());
                self.unanswered.push(tool_call_id.clone());
            }
            EventBody::ToolCallEnd { tool_call_id } => {
                self.tool_calls.retain(|id| id != tool_call_id)
            }
            EventBody::ToolCallResult { tool_call_id, .. } => {
                self.unanswered.retain(|id| id != tool_call_id)
            }
            EventBody::StepStarted { step_name } => self.steps.push(step_name.clone()),
            EventBody::StepFinished { step_name } => {
                if let Some(at) = self.steps.iter().rposition(|s| s == step_name) {
                    self.steps.remove(at);
                }
            }
            _ => {}
        }
    }

    /// The open text message, if any.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// Tool calls whose arguments are still streaming (no `TOOL_CALL_END` yet).
    pub fn streaming_calls(&self) -> &[String] {
        &self.tool_calls
    }

    /// Tool calls without a result, in the order they started.
    pub fn unanswered(&self) -> &[String] {
        &self.unanswered
    }

    /// Whether a step of this name is open.
    pub fn step_open(&self, name: &str) -> bool {
        self.steps.iter().any(|step| step == name)
    }

    /// Events that close the open steps, innermost first.
    pub fn closing_steps(&self) -> Vec<EventBody> {
        self.steps
            .iter()
            .rev()
            .map(|step_name| EventBody::StepFinished {
                step_name: step_name.clone(),
            })
            .collect()
    }

    /// The open reasoning message, if any.
    pub fn reasoning(&self) -> Option<&str> {
        self.reasoning_message.as_deref()
    }

    /// Events that close the open text message and reasoning (in that order of nesting).
    pub fn closing_content(&self) -> Vec<EventBody> {
        let mut events = Vec::new();
        if let Some(message_id) = &self.text {
            events.push(EventBody::TextMessageEnd {
                message_id: message_id.clone(),
            });
        }
        if let Some(message_id) = &self.reasoning_message {
            events.push(EventBody::ReasoningMessageEnd {
                message_id: message_id.clone(),
            });
        }
        if let Some(message_id) = &self.reasoning_span {
            events.push(EventBody::ReasoningEnd {
                message_id: message_id.clone(),
            });
        }
        events
    }

    /// Events that close open content and the argument streams of open tool calls.
    pub fn closing_calls(&self) -> Vec<EventBody> {
        let mut events = self.closing_content();
        for tool_call_id in &self.tool_calls {
            events.push(EventBody::ToolCallEnd {
                tool_call_id: tool_call_id.clone(),
            });
        }
        events
    }

    /// Events that close everything: content, tool calls (with a result saying why they
    /// have none) and steps. `why` becomes the tool results' error text.
    pub fn closing_all(&self, why: &str) -> Vec<EventBody> {
        let mut events = self.closing_calls();
        for tool_call_id in &self.unanswered {
            events.push(EventBody::ToolCallResult {
                message_id: new_id("msg"),
                tool_call_id: tool_call_id.clone(),
                content: json!({ "error": why }).to_string(),
                role: Some(ToolRole::Tool),
            });
        }
        events.extend(self.closing_steps());
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closes_everything_that_is_open_in_nesting_order() {
        let mut open = OpenItems::default();
        open.observe(&EventBody::StepStarted {
            step_name: "model_call".into(),
        });
        open.observe(&EventBody::TextMessageStart {
            message_id: "m".into(),
            role: None,
            name: None,
        });
        open.observe(&EventBody::ToolCallStart {
            tool_call_id: "c".into(),
            tool_call_name: "clock".into(),
            parent_message_id: None,
        });
        let names: Vec<&str> = open
            .closing_all("stopped")
            .iter()
            .map(|e| e.type_name())
            .collect();
        assert_eq!(
            names,
            [
                "TEXT_MESSAGE_END",
                "TOOL_CALL_END",
                "TOOL_CALL_RESULT",
                "STEP_FINISHED"
            ]
        );
    }

    #[test]
    fn a_new_run_forgets_the_previous_one() {
        let mut open = OpenItems::default();
        open.observe(&EventBody::TextMessageStart {
            message_id: "m".into(),
            role: None,
            name: None,
        });
        open.observe(&EventBody::RunStarted {
            thread_id: "t".into(),
            run_id: "r".into(),
            parent_run_id: None,
            input: None,
        });
        assert!(open.closing_all("x").is_empty());
    }
}
