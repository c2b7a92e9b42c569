//! AG-UI 1.0 events, exactly as `@ag-ui/core` 1.0.0 names them.
//!
//! Every event serialises to a JSON object with a SCREAMING_SNAKE `type` and camelCase
//! fields. Optional fields are omitted when absent, never written as `null`, because the
//! AG-UI client rejects `null`. Only the events Tandem produces are modelled here.

mod read;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One AG-UI event: the typed body plus the fields every event may carry. Read from JSON
/// by hand ([`read`]), written by serde's derive.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// The event's type and its own fields.
    #[serde(flatten)]
    pub body: EventBody,
    /// Milliseconds since the Unix epoch at which the event was produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
}

impl Event {
    /// Wraps a body with the given timestamp in milliseconds.
    pub fn at(body: EventBody, timestamp_ms: i64) -> Self {
        Self {
            body,
            timestamp: Some(timestamp_ms),
        }
    }

    /// The AG-UI `type` string of this event, e.g. `"RUN_STARTED"`.
    pub fn type_name(&self) -> &'static str {
        self.body.type_name()
    }
}

/// The AG-UI event types Tandem emits, tagged by `type`. Only [`Event`] is read from JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "camelCase"
)]
pub enum EventBody {
    /// A run (one stretch of agent work) begins on a thread (a Tandem session).
    RunStarted {
        thread_id: String,
        run_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input: Option<Value>,
    },
    /// A run ended without failing: success, paused on interrupts, or cancelled.
    RunFinished {
        thread_id: String,
        run_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<Outcome>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Vec<TokenUsage>>,
    },
    /// A run failed.
    RunError {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// A named step inside a run opens (Tandem: one per model call, `stepName` "model_call").
    StepStarted { step_name: String },
    /// The step of that name closes.
    StepFinished { step_name: String },
    /// A text message opens.
    TextMessageStart {
        message_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<TextRole>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// A piece of an open text message.
    TextMessageContent { message_id: String, delta: String },
    /// A text message closes.
    TextMessageEnd { message_id: String },
    /// A reasoning span opens.
    ReasoningStart { message_id: String },
    /// A reasoning message opens inside a span; `role` is always `"reasoning"`.
    ReasoningMessageStart {
        message_id: String,
        role: ReasoningRole,
    },
    /// A piece of an open reasoning message.
    ReasoningMessageContent { message_id: String, delta: String },
    /// A reasoning message closes.
    ReasoningMessageEnd { message_id: String },
    /// A reasoning span closes.
    ReasoningEnd { message_id: String },
    /// A provider's opaque reasoning artefact (e.g. a thinking signature), kept to be sent
    /// back on a later model call; `entity_id` is the reasoning message or tool call.
    ReasoningEncryptedValue {
        subtype: EncryptedSubtype,
        entity_id: String,
        encrypted_value: String,
    },
    /// A tool call opens.
    ToolCallStart {
        tool_call_id: String,
        tool_call_name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
    },
    /// A piece of the JSON arguments of an open tool call.
    ToolCallArgs { tool_call_id: String, delta: String },
    /// A tool call's arguments are complete.
    ToolCallEnd { tool_call_id: String },
    /// The result of a tool call (for `request_input`, the human's answer).
    ToolCallResult {
        message_id: String,
        tool_call_id: String,
        content: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<ToolRole>,
    },
    /// The whole shared state document: what a viewer joining here starts from.
    StateSnapshot { snapshot: Value },
    /// A change of the shared state: a JSON Patch (RFC 6902), the array of operations.
    StateDelta { delta: Vec<Value> },
    /// An activity's whole content (Tandem's: a tool call's progress).
    ActivitySnapshot {
        message_id: String,
        activity_type: String,
        content: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replace: Option<bool>,
    },
    /// A change of an activity's content: a JSON Patch.
    ActivityDelta {
        message_id: String,
        activity_type: String,
        patch: Vec<Value>,
    },
    /// Anything else, named.
    Custom { name: String, value: Value },
    /// An event type this version does not know (read only; Tandem never writes it).
    Unknown,
}

impl EventBody {
    /// The AG-UI `type` string of this body.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::RunStarted { .. } => "RUN_STARTED",
            Self::RunFinished { .. } => "RUN_FINISHED",
            Self::RunError { .. } => "RUN_ERROR",
            Self::StepStarted { .. } => "STEP_STARTED",
            Self::StepFinished { .. } => "STEP_FINISHED",
            Self::TextMessageStart { .. } => "TEXT_MESSAGE_START",
            Self::TextMessageContent { .. } => "TEXT_MESSAGE_CONTENT",
            Self::TextMessageEnd { .. } => "TEXT_MESSAGE_END",
            Self::ReasoningStart { .. } => "REASONING_START",
            Self::ReasoningMessageStart { .. } => "REASONING_MESSAGE_START",
            Self::ReasoningMessageContent { .. } => "REASONING_MESSAGE_CONTENT",
            Self::ReasoningMessageEnd { .. } => "REASONING_MESSAGE_END",
            Self::ReasoningEnd { .. } => "REASONING_END",
            Self::ReasoningEncryptedValue { .. } => "REASONING_ENCRYPTED_VALUE",
            Self::ToolCallStart { .. } => "TOOL_CALL_START",
            Self::ToolCallArgs { .. } => "TOOL_CALL_ARGS",
            Self::ToolCallEnd { .. } => "TOOL_CALL_END",
            Self::ToolCallResult { .. } => "TOOL_CALL_RESULT",
            Self::StateSnapshot { .. } => "STATE_SNAPSHOT",
            Self::StateDelta { .. } => "STATE_DELTA",
            Self::ActivitySnapshot { .. } => "ACTIVITY_SNAPSHOT",
            Self::ActivityDelta { .. } => "ACTIVITY_DELTA",
            Self::Custom { .. } => "CUSTOM",
            Self::Unknown => "UNKNOWN",
        }
    }

    /// Whether this event ends a run (`RUN_FINISHED` or `RUN_ERROR`).
    pub fn is_run_end(&self) -> bool {
        matches!(self, Self::RunFinished { .. } | Self::RunError { .. })
    }

    /// The piece of streamed content this event carries: an answer's or the reasoning's
    /// text, or a tool call's arguments.
    pub fn content_delta(&self) -> Option<&str> {
        match self {
            Self::TextMessageContent { delta, .. }
            | Self::ReasoningMessageContent { delta, .. }
            | Self::ToolCallArgs { delta, .. } => Some(delta),
            _ => None,
        }
    }

    /// The piece of streamed content this event carries, mutable: an answer's or the
    /// reasoning's text, or a tool call's arguments.
    pub fn content_delta_mut(&mut self) -> Option<&mut String> {
        match self {
            Self::TextMessageContent { delta, .. }
            | Self::ReasoningMessageContent { delta, .. }
            | Self::ToolCallArgs { delta, .. } => Some(delta),
            _ => None,
        }
    }

    /// Whether this event sets or changes the shared state.
    pub fn is_state(&self) -> bool {
        matches!(self, Self::StateSnapshot { .. } | Self::StateDelta { .. })
    }
}

/// Who authored a text message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextRole {
    Developer,
    System,
    Assistant,
    User,
}

/// The only role a reasoning message has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningRole {
    #[default]
    Reasoning,
}

/// What a `REASONING_ENCRYPTED_VALUE` belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EncryptedSubtype {
    /// A reasoning message.
    Message,
    /// A tool call.
    ToolCall,
}

/// The only role a tool result has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolRole {
    #[default]
    Tool,
}

/// How a run that did not fail ended. Read from JSON by hand ([`read`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum Outcome {
    /// The run completed.
    Success {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pending_tool_call_ids: Option<Vec<String>>,
    },
    /// The run paused, waiting for the listed interrupts to be answered.
    Interrupt { interrupts: Vec<Interrupt> },
    /// The run was stopped before it completed.
    Cancelled,
}

/// Something a paused run waits for (for Tandem: a human's answer).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    /// The id an answer names.
    pub id: String,
    /// Why the run paused; Tandem uses `"input_required"`.
    pub reason: String,
    /// What to show the human.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The tool call whose result the answer becomes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The JSON Schema an answer's payload must satisfy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Value>,
    /// When the interrupt stops accepting answers (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Tandem puts the input request here (`kind`, `choices`, `schema`) so a page can
    /// render the right control.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// Token counts for one model, as AG-UI reports them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn run_finished_with_interrupt_has_exact_agui_shape() {
        let event = Event::at(
            EventBody::RunFinished {
                thread_id: "t".into(),
                run_id: "r".into(),
                result: None,
                outcome: Some(Outcome::Interrupt {
                    interrupts: vec![Interrupt {
                        id: "i".into(),
                        reason: "input_required".into(),
                        message: Some("Which?".into()),
                        tool_call_id: Some("c".into()),
                        response_schema: Some(json!({"type": "object"})),
                        expires_at: None,
                        metadata: None,
                    }],
                }),
                usage: None,
            },
            7,
        );
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "timestamp": 7,
                   "outcome": {"type": "interrupt", "interrupts": [{"id": "i",
                   "reason": "input_required", "message": "Which?", "toolCallId": "c",
                   "responseSchema": {"type": "object"}}]}})
        );
    }

    #[test]
    fn absent_optionals_are_omitted_not_null() {
        let text = serde_json::to_string(&Event {
            body: EventBody::TextMessageStart {
                message_id: "m".into(),
                role: None,
                name: None,
            },
            timestamp: None,
        })
        .unwrap();
        assert_eq!(text, r#"{"type":"TEXT_MESSAGE_START","messageId":"m"}"#);
    }

    #[test]
    fn unit_outcomes_serialise_as_type_only() {
        assert_eq!(
            serde_json::to_value(Outcome::Cancelled).unwrap(),
            json!({"type": "cancelled"})
        );
        let success = Outcome::Success {
            pending_tool_call_ids: None,
        };
        assert_eq!(
            serde_json::to_value(success).unwrap(),
            json!({"type": "success"})
        );
    }

    #[test]
    fn unknown_event_types_parse_as_unknown() {
        let event: Event = serde_json::from_str(r#"{"type":"MESSAGES_SNAPSHOT","x":1}"#).unwrap();
        assert_eq!(event.body, EventBody::Unknown);
    }

    #[test]
    fn events_round_trip() {
        let event = Event::at(
            EventBody::ReasoningMessageStart {
                message_id: "m".into(),
                role: ReasoningRole::Reasoning,
            },
            1,
        );
        let text = serde_json::to_string(&event).unwrap();
        assert!(text.contains(r#""role":"reasoning""#));
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), event);
    }
}
