//! What the viewer of a share link may see of a session's events.
//!
//! The server applies it to every event before it leaves (socket frames and the share's
//! REST reads), so what a link hides never reaches the viewer's browser. A link may hide
//! the reasoning (every `REASONING_*` event) and the arguments of tool calls
//! (`TOOL_CALL_ARGS`, and the arguments an approval question or its recorded decision
//! carries). A link that hides either also hides the model's summaries of earlier turns
//! (`tandem.context_summary`), which may retell them. Encrypted reasoning (provider
//! signatures) is never shown to a share viewer: it means nothing outside the model's
//! conversation.

use bytestring::ByteString;
use serde_json::Value;
use shared::{Event, EventBody, Outcome, ServerFrame};

use crate::eventlog::event_frame;

/// What one share link hides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Visibility {
    pub hide_reasoning: bool,
    pub hide_tool_arguments: bool,
}

impl Visibility {
    /// The event as the viewer may see it, or `None` when it is hidden entirely.
    pub fn apply(&self, mut event: Event) -> Option<Event> {
        match &mut event.body {
            EventBody::ReasoningEncryptedValue { .. } => return None,
            EventBody::ReasoningStart { .. }
            | EventBody::ReasoningMessageStart { .. }
            | EventBody::ReasoningMessageContent { .. }
            | EventBody::ReasoningMessageEnd { .. }
            | EventBody::ReasoningEnd { .. }
                if self.hide_reasoning =>
            {
                return None
            }
            EventBody::ToolCallArgs { .. } if self.hide_tool_arguments => return None,
            EventBody::RunFinished {
                outcome: Some(Outcome::Interrupt { interrupts }),
                ..
            } if self.hide_tool_arguments => {
                for interrupt in interrupts {
                    if let Some(Value::Object(metadata)) = &mut interrupt.metadata {
                        metadata.remove("arguments");
                    }
                }
            }
            // A summary of earlier turns is the model's own words about them: it may retell
            // what a link hides, so it is shown only to links that hide nothing.
            EventBody::Custom { name, .. }
                if (self.hide_tool_arguments || self.hide_reasoning)
                    && name == shared::custom::CONTEXT_SUMMARY =>
            {
                return None
            }
            EventBody::Custom {
                name,
                value: Value::Object(record),
            } if self.hide_tool_arguments && name == shared::custom::TOOL_APPROVAL => {
                record.remove("arguments");
            }
            _ => {}
        }
        Some(event)
    }

    /// A socket frame as the viewer may see it (re-serialised only when it changed).
    pub fn frame(&self, frame: ByteString) -> Option<ByteString> {
        let Ok(ServerFrame::Event { seq, event }) = serde_json::from_str::<ServerFrame>(&frame)
        else {
            return Some(frame);
        };
        let shown = self.apply(event.clone())?;
        if shown == event {
            return Some(frame);
        }
        let json = serde_json::to_string(&shown).ok()?;
        Some(event_frame(seq, &json))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(value: Value) -> Event {
        serde_json::from_value(value).unwrap()
    }

    const ALL_HIDDEN: Visibility = Visibility {
        hide_reasoning: true,
        hide_tool_arguments: true,
    };

    #[test]
    fn hidden_reasoning_and_arguments_never_leave() {
        for hidden in [
            json!({"type": "REASONING_START", "messageId": "r"}),
            json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "m", "delta": "secret plan"}),
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{\"path\":\"x\"}"}),
        ] {
            assert_eq!(ALL_HIDDEN.apply(event(hidden.clone())), None, "{hidden}");
            assert!(Visibility::default().apply(event(hidden)).is_some());
        }
        let summary = json!({"type": "CUSTOM", "name": "tandem.context_summary",
            "value": {"firstUserMessage": 2, "summary": "wrote {\"path\":\"x\"}", "summarisedMessages": 3}});
        for hides_one in [
            Visibility {
                hide_reasoning: true,
                hide_tool_arguments: false,
            },
            Visibility {
                hide_reasoning: false,
                hide_tool_arguments: true,
            },
        ] {
            assert_eq!(hides_one.apply(event(summary.clone())), None);
        }
        assert!(Visibility::default().apply(event(summary)).is_some());
        let signature = json!({"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message",
                               "entityId": "m", "encryptedValue": "sig"});
        assert_eq!(Visibility::default().apply(event(signature)), None);
    }

    #[test]
    fn approvals_lose_their_arguments_but_keep_the_question() {
        let finished = event(
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r",
            "outcome": {"type": "interrupt", "interrupts": [{"id": "i", "reason": "tool_approval",
                "message": "Allow `write_file` to run?",
                "metadata": {"kind": "tool_approval", "toolName": "write_file",
                             "arguments": {"path": "secret.txt"}}}]}}),
        );
        let shown = serde_json::to_value(ALL_HIDDEN.apply(finished).unwrap()).unwrap();
        let interrupt = &shown["outcome"]["interrupts"][0];
        assert_eq!(interrupt["message"], "Allow `write_file` to run?");
        assert_eq!(interrupt["metadata"]["toolName"], "write_file");
        assert!(interrupt["metadata"].get("arguments").is_none(), "{shown}");

        let record = event(json!({"type": "CUSTOM", "name": "tandem.tool_approval",
            "value": {"approved": true, "edited": true, "arguments": {"path": "a"}}}));
        let shown = serde_json::to_value(ALL_HIDDEN.apply(record).unwrap()).unwrap();
        assert!(shown["value"].get("arguments").is_none(), "{shown}");
    }

    #[test]
    fn frames_pass_unchanged_unless_something_is_hidden() {
        let text = event_frame(4, r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#);
        assert_eq!(ALL_HIDDEN.frame(text.clone()), Some(text));
        let args = event_frame(
            5,
            r#"{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"x"}"#,
        );
        assert_eq!(ALL_HIDDEN.frame(args), None);
    }
}
