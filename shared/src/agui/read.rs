//! Reading an [`Event`] and a run's [`Outcome`] from JSON, written by hand rather than
//! derived (why: [`crate::fields`]). Writing stays derived, and the tests hold the two to
//! each other for every event type and outcome.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::{Event, EventBody, Outcome};
use crate::fields::{read_object, unknown_variant, Fields};

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_object(deserializer, event)
    }
}

impl<'de> Deserialize<'de> for Outcome {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_object(deserializer, |f| {
            let kind = f.string("type")?;
            Ok(match kind.as_str() {
                "success" => Outcome::Success {
                    pending_tool_call_ids: f.optional("pendingToolCallIds")?,
                },
                "interrupt" => Outcome::Interrupt {
                    interrupts: f.typed("interrupts")?,
                },
                "cancelled" => Outcome::Cancelled,
                other => {
                    return Err(unknown_variant(
                        other,
                        &["success", "interrupt", "cancelled"],
                    ))
                }
            })
        })
    }
}

impl Event {
    /// The event `value` holds: its `type`, that type's fields, and `timestamp`.
    pub fn from_json(value: Value) -> Result<Self, String> {
        event(&mut Fields::of(value)?)
    }
}

/// The event whose fields `f` holds.
fn event(f: &mut Fields) -> Result<Event, String> {
    let timestamp = f.optional("timestamp")?;
    let body = body(f)?;
    Ok(Event { body, timestamp })
}

/// The body named by the object's `type`; an unknown type is [`EventBody::Unknown`].
fn body(f: &mut Fields) -> Result<EventBody, String> {
    let kind = f.string("type")?;
    Ok(match kind.as_str() {
        "RUN_STARTED" => EventBody::RunStarted {
            thread_id: f.string("threadId")?,
            run_id: f.string("runId")?,
            parent_run_id: f.optional_string("parentRunId")?,
            input: f.optional_value("input"),
        },
        "RUN_FINISHED" => EventBody::RunFinished {
            thread_id: f.string("threadId")?,
            run_id: f.string("runId")?,
            result: f.optional_value("result"),
            outcome: f.optional("outcome")?,
            usage: f.optional("usage")?,
        },
        "RUN_ERROR" => EventBody::RunError {
            message: f.string("message")?,
            code: f.optional_string("code")?,
        },
        "STEP_STARTED" => EventBody::StepStarted {
            step_name: f.string("stepName")?,
        },
        "STEP_FINISHED" => EventBody::StepFinished {
            step_name: f.string("stepName")?,
        },
        "TEXT_MESSAGE_START" => EventBody::TextMessageStart {
            message_id: f.string("messageId")?,
            role: f.optional("role")?,
            name: f.optional_string("name")?,
        },
        "TEXT_MESSAGE_CONTENT" => EventBody::TextMessageContent {
            message_id: f.string("messageId")?,
            delta: f.string("delta")?,
        },
        "TEXT_MESSAGE_END" => EventBody::TextMessageEnd {
            message_id: f.string("messageId")?,
        },
        "REASONING_START" => EventBody::ReasoningStart {
            message_id: f.string("messageId")?,
        },
        "REASONING_MESSAGE_START" => EventBody::ReasoningMessageStart {
            message_id: f.string("messageId")?,
            role: f.typed("role")?,
        },
        "REASONING_MESSAGE_CONTENT" => EventBody::ReasoningMessageContent {
            message_id: f.string("messageId")?,
            delta: f.string("delta")?,
        },
        "REASONING_MESSAGE_END" => EventBody::ReasoningMessageEnd {
            message_id: f.string("messageId")?,
        },
        "REASONING_END" => EventBody::ReasoningEnd {
            message_id: f.string("messageId")?,
        },
        "REASONING_ENCRYPTED_VALUE" => EventBody::ReasoningEncryptedValue {
            subtype: f.typed("subtype")?,
            entity_id: f.string("entityId")?,
            encrypted_value: f.string("encryptedValue")?,
        },
        "TOOL_CALL_START" => EventBody::ToolCallStart {
            tool_call_id: f.string("toolCallId")?,
            tool_call_name: f.string("toolCallName")?,
            parent_message_id: f.optional_string("parentMessageId")?,
        },
        "TOOL_CALL_ARGS" => EventBody::ToolCallArgs {
            tool_call_id: f.string("toolCallId")?,
            delta: f.string("delta")?,
        },
        "TOOL_CALL_END" => EventBody::ToolCallEnd {
            tool_call_id: f.string("toolCallId")?,
        },
        "TOOL_CALL_RESULT" => EventBody::ToolCallResult {
            message_id: f.string("messageId")?,
            tool_call_id: f.string("toolCallId")?,
            content: f.string("content")?,
            role: f.optional("role")?,
        },
        "STATE_SNAPSHOT" => EventBody::StateSnapshot {
            snapshot: f.value("snapshot")?,
        },
        "STATE_DELTA" => EventBody::StateDelta {
            delta: f.typed("delta")?,
        },
        "ACTIVITY_SNAPSHOT" => EventBody::ActivitySnapshot {
            message_id: f.string("messageId")?,
            activity_type: f.string("activityType")?,
            content: f.value("content")?,
            replace: f.optional("replace")?,
        },
        "ACTIVITY_DELTA" => EventBody::ActivityDelta {
            message_id: f.string("messageId")?,
            activity_type: f.string("activityType")?,
            patch: f.typed("patch")?,
        },
        "CUSTOM" => EventBody::Custom {
            name: f.string("name")?,
            value: f.value("value")?,
        },
        _ => EventBody::Unknown,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::agui::{
        EncryptedSubtype, Interrupt, Outcome, ReasoningRole, TextRole, TokenUsage, ToolRole,
    };

    /// One body of every type, each optional field set, so nothing is left unread.
    fn every_body() -> Vec<EventBody> {
        let s = |text: &str| text.to_string();
        vec![
            EventBody::RunStarted {
                thread_id: s("t"),
                run_id: s("r"),
                parent_run_id: Some(s("p")),
                input: Some(json!({"a": 1})),
            },
            EventBody::RunFinished {
                thread_id: s("t"),
                run_id: s("r"),
                result: Some(json!([1])),
                outcome: Some(Outcome::Interrupt {
                    interrupts: vec![Interrupt {
                        id: s("i"),
                        reason: s("input_required"),
                        message: Some(s("Which?")),
                        tool_call_id: Some(s("c")),
                        response_schema: Some(json!({"type": "object"})),
                        expires_at: Some(s("2026-11-27T00:00:00Z")),
                        metadata: Some(json!({"kind": "choice"})),
                    }],
                }),
                usage: Some(vec![TokenUsage {
                    provider: Some(s("openai")),
                    model: Some(s("m")),
                    input_tokens: Some(3),
                    output_tokens: Some(4),
                    reasoning_tokens: Some(5),
                }]),
            },
            EventBody::RunError {
                message: s("boom"),
                code: Some(s("x")),
            },
            EventBody::StepStarted {
                step_name: s("model_call"),
            },
            EventBody::StepFinished {
                step_name: s("model_call"),
            },
            EventBody::TextMessageStart {
                message_id: s("m"),
                role: Some(TextRole::Assistant),
                name: Some(s("n")),
            },
            EventBody::TextMessageContent {
                message_id: s("m"),
                delta: s("Hi"),
            },
            EventBody::TextMessageEnd { message_id: s("m") },
            EventBody::ReasoningStart { message_id: s("m") },
            EventBody::ReasoningMessageStart {
                message_id: s("m"),
                role: ReasoningRole::Reasoning,
            },
            EventBody::ReasoningMessageContent {
                message_id: s("m"),
                delta: s("hmm"),
            },
            EventBody::ReasoningMessageEnd { message_id: s("m") },
            EventBody::ReasoningEnd { message_id: s("m") },
            EventBody::ReasoningEncryptedValue {
                subtype: EncryptedSubtype::ToolCall,
                entity_id: s("c"),
                encrypted_value: s("sig"),
            },
            EventBody::ToolCallStart {
                tool_call_id: s("c"),
                tool_call_name: s("search"),
                parent_message_id: Some(s("m")),
            },
            EventBody::ToolCallArgs {
                tool_call_id: s("c"),
                delta: s("{}"),
            },
            EventBody::ToolCallEnd {
                tool_call_id: s("c"),
            },
            EventBody::ToolCallResult {
                message_id: s("m"),
                tool_call_id: s("c"),
                content: s("ok"),
                role: Some(ToolRole::Tool),
            },
            EventBody::StateSnapshot {
                snapshot: json!({"plan": []}),
            },
            EventBody::StateDelta {
                delta: vec![json!({"op": "add", "path": "/a", "value": 1})],
            },
            EventBody::ActivitySnapshot {
                message_id: s("m"),
                activity_type: s("progress"),
                content: json!({"done": 1}),
                replace: Some(false),
            },
            EventBody::ActivityDelta {
                message_id: s("m"),
                activity_type: s("progress"),
                patch: vec![json!({"op": "remove", "path": "/done"})],
            },
            EventBody::Custom {
                name: s("tandem.x"),
                value: json!(null),
            },
            EventBody::Unknown,
        ]
    }

    #[test]
    fn every_event_type_reads_back_what_it_writes() {
        let bodies = every_body();
        assert_eq!(bodies.len(), 24, "one body per event type");
        for body in bodies {
            let event = Event::at(body, 7);
            let text = serde_json::to_string(&event).unwrap();
            let read: Event = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(read, event, "{text}");
            // The same through a borrowed reader and a Value.
            assert_eq!(
                serde_json::from_slice::<Event>(text.as_bytes()).unwrap(),
                event
            );
            assert_eq!(
                serde_json::from_value::<Event>(serde_json::to_value(&event).unwrap()).unwrap(),
                event
            );
        }
    }

    #[test]
    fn optional_fields_may_be_absent_or_null_and_unknown_fields_are_ignored() {
        let read: Event = serde_json::from_value(json!({
            "type": "TEXT_MESSAGE_START", "messageId": "m", "role": null, "extra": [1, 2]
        }))
        .unwrap();
        assert_eq!(
            read,
            Event {
                body: EventBody::TextMessageStart {
                    message_id: "m".into(),
                    role: None,
                    name: None
                },
                timestamp: None
            }
        );
        let read: Event = serde_json::from_value(json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "input": null, "timestamp": null})).unwrap();
        assert_eq!(
            read.body,
            EventBody::RunStarted {
                thread_id: "t".into(),
                run_id: "r".into(),
                parent_run_id: None,
                input: None
            }
        );
        // A required field of any type may be null, as serde reads it.
        let read: Event =
            serde_json::from_value(json!({"type": "CUSTOM", "name": "n", "value": null})).unwrap();
        assert_eq!(
            read.body,
            EventBody::Custom {
                name: "n".into(),
                value: Value::Null
            }
        );
    }

    #[test]
    fn malformed_events_are_refused_with_the_field_named() {
        let refused = |value: Value| {
            serde_json::from_value::<Event>(value)
                .unwrap_err()
                .to_string()
        };
        assert!(refused(json!({"messageId": "m"})).contains("missing field `type`"));
        assert!(refused(json!({"type": 3})).contains("`type`"));
        assert!(
            refused(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m"}))
                .contains("missing field `delta`")
        );
        assert!(refused(json!({"type": "TEXT_MESSAGE_END", "messageId": 5}))
            .contains("`messageId`: invalid type: number, expected a string"));
        assert!(refused(json!({"type": "STATE_SNAPSHOT"})).contains("missing field `snapshot`"));
        assert!(refused(
            json!({"type": "REASONING_MESSAGE_START", "messageId": "m", "role": "user"})
        )
        .contains("`role`"));
        assert!(refused(json!({"type": "STATE_DELTA", "delta": {}})).contains("`delta`"));
        assert!(
            refused(json!({"type": "RUN_ERROR", "message": "x", "timestamp": "noon"}))
                .contains("`timestamp`")
        );
        assert!(refused(json!(["RUN_ERROR"])).contains("expected an object"));
        assert!(serde_json::from_str::<Event>("{\"type\":").is_err());
    }
}
