//! What the viewer of a share link may see of a session's events: a positive list.
//!
//! The server applies it to every event before it leaves a share link's socket (the
//! link's REST read carries no event), so what a link does not show never reaches the
//! viewer's browser. A viewer gets, event type by event type, only the fields listed
//! here, and of a `CUSTOM` event only the names and value fields listed here: a new
//! event type, a new `CUSTOM` name or a new field is hidden until someone decides here
//! that it may be shown. Every shown event keeps its `type` and `timestamp`.
//!
//! A link may hide the reasoning (every `REASONING_*` event), the arguments of tool
//! calls (`TOOL_CALL_ARGS`, the arguments an approval question, a client-tools wait or a
//! recorded decision carries, and, since any result may repeat them, what every tool's
//! result and progress message say: [`results`]) and the files and images attached (`tandem.attachments`; their
//! bytes are served to a link only when it shows them) and the shared state
//! (`STATE_SNAPSHOT`, `STATE_DELTA`: shown whole, as the session's own data). A link that hides any of them
//! also hides the model's summaries of earlier turns (`tandem.context_summary`), which may retell them. Whatever a link
//! hides, a viewer never gets encrypted reasoning (provider signatures), nor the
//! `context`, `state`, `forwardedProps`, tool definitions or answers an AG-UI client
//! sent: `RUN_STARTED.input` keeps only the person's messages the page shows.
//!
//! It works on the events' JSON, not on [`shared::Event`], whose `CUSTOM` values and
//! interrupt metadata are free-form. It decides what is shown and nothing else: which
//! sockets it applies to is [`crate::ws`]'s business.

mod activities;
mod custom;
mod fields;
mod results;
mod runs;
#[cfg(test)]
mod samples;
#[cfg(test)]
mod tests;

use bytestring::ByteString;
use serde_json::Value;

use crate::store::FramePage;
use fields::{documents, scalar, scalars, Object};

/// What one share link hides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Visibility {
    pub hide_reasoning: bool,
    pub hide_tool_arguments: bool,
    pub hide_attachments: bool,
    pub hide_state: bool,
    /// Unlike the rest, hidden unless the link says to show them.
    pub show_instructions: bool,
}

impl Visibility {
    /// Whether the link shows the reasoning.
    fn shows_reasoning(&self) -> bool {
        !self.hide_reasoning
    }

    /// Whether the link shows the arguments of tool calls.
    fn shows_arguments(&self) -> bool {
        !self.hide_tool_arguments
    }

    /// Whether the link shows the files and images attached.
    fn shows_attachments(&self) -> bool {
        !self.hide_attachments
    }

    /// Whether the link shows the shared state.
    fn shows_state(&self) -> bool {
        !self.hide_state
    }

    /// Whether the link shows the instructions the model was given.
    fn shows_instructions(&self) -> bool {
        self.show_instructions
    }

    /// Whether the link hides nothing a link can hide.
    fn hides_nothing(&self) -> bool {
        self.shows_reasoning()
            && self.shows_arguments()
            && self.shows_attachments()
            && self.shows_state()
    }

    /// An event (its JSON) as the viewer may see it, or `None` when it is hidden
    /// entirely: hidden by the link, never shown, or of a type nobody decided on.
    pub fn event(&self, event: &Value) -> Option<Value> {
        let event = event.as_object()?;
        let kind = event.get("type")?.as_str()?;
        let reasoning = self.shows_reasoning();
        let fields = match kind {
            "RUN_STARTED" => runs::started(event, self),
            "RUN_FINISHED" => runs::finished(event, self),
            "RUN_ERROR" => scalars(event, &["message", "code"]),
            "STEP_STARTED" | "STEP_FINISHED" => scalars(event, &["stepName"]),
            "TEXT_MESSAGE_START" => scalars(event, &["messageId", "role", "name"]),
            "TEXT_MESSAGE_CONTENT" => scalars(event, &["messageId", "delta"]),
            "TEXT_MESSAGE_END" => scalars(event, &["messageId"]),
            "REASONING_START" | "REASONING_MESSAGE_END" | "REASONING_END" if reasoning => {
                scalars(event, &["messageId"])
            }
            "REASONING_MESSAGE_START" if reasoning => scalars(event, &["messageId", "role"]),
            "REASONING_MESSAGE_CONTENT" if reasoning => scalars(event, &["messageId", "delta"]),
            "TOOL_CALL_START" => scalars(event, &["toolCallId", "toolCallName", "parentMessageId"]),
            "TOOL_CALL_ARGS" if self.shows_arguments() => scalars(event, &["toolCallId", "delta"]),
            "TOOL_CALL_END" => scalars(event, &["toolCallId"]),
            "TOOL_CALL_RESULT" => results::tool_result(event, self),
            "STATE_SNAPSHOT" if self.shows_state() => documents(event, &["snapshot"]),
            "STATE_DELTA" if self.shows_state() => documents(event, &["delta"]),
            // A tool's progress shows as its card does: whole, or (where results are
            // hidden) only how far it got, never what the tool says of it.
            "ACTIVITY_SNAPSHOT" => {
                let mut fields = scalars(event, &["messageId", "activityType", "replace"]);
                match self.shows_arguments() {
                    true => fields.extend(documents(event, &["content"])),
                    false => fields.extend(activities::content(event)),
                }
                fields
            }
            "ACTIVITY_DELTA" => {
                let mut fields = scalars(event, &["messageId", "activityType"]);
                match self.shows_arguments() {
                    true => fields.extend(documents(event, &["patch"])),
                    false => fields.extend(activities::patch(event)),
                }
                fields
            }
            "CUSTOM" => custom::custom(event, self)?,
            // REASONING_ENCRYPTED_VALUE (a provider's signature: it means nothing outside
            // the model's conversation), what the link hides, and every type not above.
            _ => return None,
        };
        let mut shown = Object::new();
        shown.insert("type".into(), Value::String(kind.into()));
        shown.extend(fields);
        if let Some(timestamp) = event.get("timestamp").and_then(scalar) {
            shown.insert("timestamp".into(), timestamp);
        }
        Some(Value::Object(shown))
    }

    /// A socket frame as the viewer may see it: the frame itself when nothing in it is
    /// hidden (no re-serialising), `None` when it is hidden entirely.
    pub fn frame(&self, frame: ByteString) -> Option<ByteString> {
        let Ok(Value::Object(envelope)) = serde_json::from_str::<Value>(&frame) else {
            return None;
        };
        match envelope.get("kind")?.as_str()? {
            "event" => {
                let seq = envelope.get("seq")?.as_u64()?;
                let event = envelope.get("event")?;
                let shown = self.event(event)?;
                if shown == *event && envelope.len() == 3 {
                    return Some(frame);
                }
                Some(FramePage::frame(seq, &serde_json::to_string(&shown).ok()?))
            }
            "caught_up" => Self::known_frame(frame, &envelope, &["kind", "seq"]),
            "error" => Self::known_frame(frame, &envelope, &["kind", "code", "message"]),
            _ => None,
        }
    }

    /// A frame of the envelope's own with only the listed fields.
    fn known_frame(frame: ByteString, envelope: &Object, keys: &[&str]) -> Option<ByteString> {
        let shown = scalars(envelope, keys);
        if shown.len() == envelope.len() {
            return Some(frame);
        }
        serde_json::to_string(&shown).ok().map(ByteString::from)
    }
}
