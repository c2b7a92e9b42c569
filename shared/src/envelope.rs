//! Tandem's WebSocket envelope: the frames a socket carries around AG-UI events.
//!
//! Server frames are tagged by `kind` (`event`, `caught_up`, `queue`, `error`); client frames by
//! `kind` too (`user_message`, `resume`, `cancel`). Field names are camelCase.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agui::Event;
use crate::fields::{read_object, unknown_variant};

/// A frame the server sends on a session socket. Read from JSON by hand, like [`Event`]
/// (why: [`crate::fields`]); written by serde's derive.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum ServerFrame {
    /// One committed event of the session's log, in `seq` order.
    Event { seq: u64, event: Event },
    /// The backlog after the socket's `after` has been sent; live frames follow.
    /// `seq` is the last sequence number sent so far; `queued`, the messages waiting for
    /// their turn (none when absent).
    CaughtUp {
        seq: u64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        queued: Vec<crate::queue::QueuedMessage>,
    },
    /// The session's queued messages changed (one was queued, edited, withdrawn, or
    /// started): all of them now, in the order they run. Not an AG-UI event: a queued
    /// message may wait between runs (through a pause), where AG-UI allows none; its
    /// words enter the log as the person's message when it runs.
    Queue {
        queued: Vec<crate::queue::QueuedMessage>,
    },
    /// The reply to a client frame that could not be taken; the socket stays open.
    Error { code: String, message: String },
}

/// A frame a client sends on a session socket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum ClientFrame {
    /// A message from the person; starts a run. A repeated `clientMessageId` is taken once.
    UserMessage {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_message_id: Option<String>,
        /// A model of `GET /api/models` for this run and the session's later ones.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// What the message does if a run is active (the server's default when absent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        while_running: Option<crate::queue::WhileRunning>,
        /// Ids of attachments uploaded to the session, as `PostMessage.attachments`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<String>,
    },
    /// An answer to a pending interrupt.
    Resume {
        interrupt_id: String,
        status: ResumeStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        payload: Option<Value>,
    },
    /// Stop the active run (or cancel the pending question). A struct variant with no
    /// fields, not a unit one: serde lets any field through a unit variant of an
    /// internally tagged enum, whatever `deny_unknown_fields` says.
    Cancel {},
}

/// How an interrupt is answered.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResumeStatus {
    /// Answered with a payload that satisfies the interrupt's `responseSchema`.
    Resolved,
    /// Declined: the agent is told the person chose not to answer.
    Cancelled,
}

impl ResumeStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Resolved => "resolved",
            Self::Cancelled => "cancelled",
        }
    }
}

impl<'de> Deserialize<'de> for ServerFrame {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_object(deserializer, |f| {
            let kind = f.string("kind")?;
            Ok(match kind.as_str() {
                "event" => Self::Event {
                    seq: f.typed("seq")?,
                    event: Event::from_json(f.value("event")?)?,
                },
                "caught_up" => Self::CaughtUp {
                    seq: f.typed("seq")?,
                    queued: f.optional("queued")?.unwrap_or_default(),
                },
                "queue" => Self::Queue {
                    queued: f.typed("queued")?,
                },
                "error" => Self::Error {
                    code: f.string("code")?,
                    message: f.string("message")?,
                },
                other => {
                    let kinds = &["event", "caught_up", "queue", "error"];
                    return Err(unknown_variant(other, kinds));
                }
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn client_frames_parse_from_documented_json() {
        let frame: ClientFrame = serde_json::from_value(json!({
            "kind": "resume", "interruptId": "i", "status": "resolved", "payload": {"text": "hi"}
        }))
        .unwrap();
        assert_eq!(
            frame,
            ClientFrame::Resume {
                interrupt_id: "i".into(),
                status: ResumeStatus::Resolved,
                payload: Some(json!({"text": "hi"}))
            }
        );
        let cancel: ClientFrame = serde_json::from_str(r#"{"kind":"cancel"}"#).unwrap();
        assert_eq!(cancel, ClientFrame::Cancel {});
        assert_eq!(
            serde_json::to_string(&ClientFrame::Cancel {}).unwrap(),
            r#"{"kind":"cancel"}"#
        );
    }

    #[test]
    fn unknown_kinds_and_fields_are_rejected() {
        assert!(serde_json::from_str::<ClientFrame>(r#"{"kind":"shout"}"#).is_err());
        for unknown in [
            r#"{"kind":"user_message","txt":"x"}"#,
            r#"{"kind":"resume","interruptId":"i","status":"cancelled","why":"x"}"#,
            r#"{"kind":"cancel","runId":"r"}"#,
        ] {
            let refused = serde_json::from_str::<ClientFrame>(unknown).unwrap_err();
            assert!(
                refused.to_string().contains("unknown field"),
                "{unknown}: {refused}"
            );
        }
    }

    #[test]
    fn server_frames_read_back_what_they_write() {
        let frames = [
            ServerFrame::Event {
                seq: 3,
                event: Event::at(
                    crate::EventBody::TextMessageContent {
                        message_id: "m".into(),
                        delta: "Hi".into(),
                    },
                    9,
                ),
            },
            ServerFrame::CaughtUp {
                seq: 4,
                queued: Vec::new(),
            },
            ServerFrame::Queue { queued: Vec::new() },
            ServerFrame::Error {
                code: "invalid_frame".into(),
                message: "No.".into(),
            },
        ];
        for frame in frames {
            let text = serde_json::to_string(&frame).unwrap();
            assert_eq!(
                serde_json::from_str::<ServerFrame>(&text).unwrap(),
                frame,
                "{text}"
            );
        }
        let queued = json!({"kind": "caught_up", "seq": 1, "queued": [{"id": "q", "runId": "r", "text": "next"}]});
        assert!(serde_json::from_value::<ServerFrame>(queued).is_ok());
        let unknown = serde_json::from_str::<ServerFrame>(r#"{"kind":"shout"}"#).unwrap_err();
        assert!(unknown.to_string().contains("unknown variant `shout`"));
        let event = serde_json::from_str::<ServerFrame>(r#"{"kind":"event","seq":1,"event":{}}"#);
        assert!(event
            .unwrap_err()
            .to_string()
            .contains("missing field `type`"));
    }

    #[test]
    fn caught_up_frame_shape() {
        assert_eq!(
            serde_json::to_value(ServerFrame::CaughtUp {
                seq: 4,
                queued: Vec::new()
            })
            .unwrap(),
            json!({"kind": "caught_up", "seq": 4})
        );
    }
}
