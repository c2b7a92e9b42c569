//! Server frames as text, built once per event and shared by every socket.

use bytestring::ByteString;

use crate::store::{FramePage, EVENT_FRAME_MIDDLE, EVENT_FRAME_PREFIX};

/// `{"kind":"event","seq":N,"event":<json>}` without re-serialising the event (the log's
/// own frame, [`FramePage::frame`]).
pub fn event_frame(seq: u64, event_json: &str) -> ByteString {
    FramePage::frame(seq, event_json)
}

/// The event JSON inside a frame made by [`event_frame`].
pub fn event_of(frame: &str) -> Option<&str> {
    let rest = frame.strip_prefix(EVENT_FRAME_PREFIX)?;
    let start = rest.find(EVENT_FRAME_MIDDLE)? + EVENT_FRAME_MIDDLE.len();
    rest[start..].strip_suffix('}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_comes_back_out_of_its_frame() {
        let json = r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"}"}"#;
        assert_eq!(event_of(&event_frame(12, json)), Some(json));
        assert_eq!(event_of(r#"{"kind":"caught_up","seq":3}"#), None);
    }
    use shared::ServerFrame;

    #[test]
    fn event_frame_parses_as_a_server_frame() {
        let json = r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#;
        let frame: ServerFrame = serde_json::from_str(&event_frame(3, json)).unwrap();
        match frame {
            ServerFrame::Event { seq, event } => {
                assert_eq!(seq, 3);
                assert_eq!(event.type_name(), "TEXT_MESSAGE_END");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
