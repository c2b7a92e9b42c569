//! A page of socket frames read from the log in one query, as replay sends them.

/// A page of socket frames read from the log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FramePage {
    /// One `{"kind":"event",…}` frame per event, in seq order.
    pub frames: Vec<bytestring::ByteString>,
    /// The seq of the last frame (the `after` asked for when the page is empty).
    pub last_seq: u64,
}

impl FramePage {
    /// The socket frame of an event: `{"kind":"event","seq":N,"event":<json>}`, the event
    /// spliced in as stored, not re-serialised.
    pub fn frame(seq: u64, event_json: &str) -> bytestring::ByteString {
        let mut text = String::with_capacity(event_json.len() + 40);
        Self::write_frame(&mut text, seq, event_json);
        bytestring::ByteString::from(text)
    }

    /// The event JSON inside a frame made by [`FramePage::frame`]; `None` for any other
    /// frame.
    pub fn event_of(frame: &str) -> Option<&str> {
        let rest = frame.strip_prefix(EVENT_FRAME_PREFIX)?;
        let start = rest.find(EVENT_FRAME_MIDDLE)? + EVENT_FRAME_MIDDLE.len();
        rest[start..].strip_suffix('}')
    }

    /// Appends an event's frame (see [`FramePage::frame`]) to `text`.
    pub fn write_frame(text: &mut String, seq: u64, event_json: &str) {
        let mut digits = itoa::Buffer::new();
        for piece in event_frame_pieces(digits.format(seq), event_json) {
            text.push_str(piece);
        }
    }

    /// A page of frames written one after another into `text`, each ending at the offset
    /// in `ends`, the last of them `last_seq`'s; the frames share the text.
    pub(crate) fn from_text(text: String, ends: &[usize], last_seq: u64) -> Self {
        let text = bytestring::ByteString::from(text);
        let mut start = 0;
        let frames = ends
            .iter()
            .map(|&end| {
                let frame = text.slice_ref(&text[start..end]);
                start = end;
                frame
            })
            .collect();
        Self { frames, last_seq }
    }

    /// Separates frames a database joined into one value (`group_concat`, `string_agg`):
    /// a raw 0x1E byte never occurs in JSON text (control characters in strings are
    /// escaped).
    pub const SEPARATOR: char = '\u{1e}';

    /// The page of a database's joined frames (`None`: no rows after `after`) and the
    /// last seq among them.
    ///
    /// The frames arrive in seq order (the query reads them so), but an aggregate only
    /// promises an order with an `ORDER BY` of its own, which costs SQLite a sort of the
    /// whole page (half of a replay's time); so the order is checked here, cheaply, and
    /// restored if it ever differs.
    pub(crate) fn from_joined(joined: Option<String>, last: Option<i64>, after: u64) -> Self {
        let (Some(joined), Some(last)) = (joined, last) else {
            return Self {
                frames: Vec::new(),
                last_seq: after,
            };
        };
        let joined = bytestring::ByteString::from(joined);
        let mut frames: Vec<_> = joined
            .split(Self::SEPARATOR)
            .map(|frame| joined.slice_ref(frame))
            .collect();
        let in_order = frames
            .windows(2)
            .all(|pair| frame_seq(&pair[0]) < frame_seq(&pair[1]));
        if !in_order {
            frames.sort_by_key(|frame| frame_seq(frame));
        }
        Self {
            frames,
            last_seq: last as u64,
        }
    }
}

/// What an event's frame starts with, before its seq.
pub(crate) const EVENT_FRAME_PREFIX: &str = r#"{"kind":"event","seq":"#;
/// What stands between an event frame's seq and its event.
pub(crate) const EVENT_FRAME_MIDDLE: &str = r#","event":"#;

/// An event's frame, `{"kind":"event","seq":N,"event":<json>}`, as the pieces it is
/// written from, in order: every writer of the frame (a page's text, a socket's batch)
/// writes these, so the layout lives here once.
pub(crate) fn event_frame_pieces<'a>(seq_digits: &'a str, event_json: &'a str) -> [&'a str; 5] {
    [
        EVENT_FRAME_PREFIX,
        seq_digits,
        EVENT_FRAME_MIDDLE,
        event_json,
        "}",
    ]
}

/// The seq of a frame the log builds (`{"kind":"event","seq":N,…`); 0 if it is not one.
fn frame_seq(frame: &str) -> u64 {
    let digits = frame.strip_prefix(EVENT_FRAME_PREFIX).unwrap_or_default();
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::FramePage;

    #[test]
    fn the_event_comes_back_out_of_its_frame() {
        let json = r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"}"}"#;
        assert_eq!(FramePage::event_of(&FramePage::frame(12, json)), Some(json));
        assert_eq!(FramePage::event_of(r#"{"kind":"caught_up","seq":3}"#), None);
    }

    #[test]
    fn an_event_frame_parses_as_a_server_frame() {
        let json = r#"{"type":"TEXT_MESSAGE_END","messageId":"m"}"#;
        let frame: shared::ServerFrame = serde_json::from_str(&FramePage::frame(3, json)).unwrap();
        match frame {
            shared::ServerFrame::Event { seq, event } => {
                assert_eq!(seq, 3);
                assert_eq!(event.type_name(), "TEXT_MESSAGE_END");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    fn joined(seqs: &[u64]) -> String {
        let frames: Vec<String> = seqs
            .iter()
            .map(|seq| format!(r#"{{"kind":"event","seq":{seq},"event":{{"type":"RAW"}}}}"#))
            .collect();
        frames.join(&FramePage::SEPARATOR.to_string())
    }

    fn seqs(page: &FramePage) -> Vec<u64> {
        page.frames
            .iter()
            .map(|frame| super::frame_seq(frame))
            .collect()
    }

    #[test]
    fn joined_frames_come_out_in_seq_order_whatever_order_they_came_in() {
        let page = FramePage::from_joined(Some(joined(&[8, 9, 10, 11])), Some(11), 7);
        assert_eq!(seqs(&page), [8, 9, 10, 11]);
        assert_eq!(page.last_seq, 11);
        let page = FramePage::from_joined(Some(joined(&[10, 8, 11, 9])), Some(11), 7);
        assert_eq!(seqs(&page), [8, 9, 10, 11]);
        assert!(page.frames[0].starts_with(r#"{"kind":"event","seq":8,"#));
    }

    #[test]
    fn an_empty_page_keeps_the_seq_asked_for() {
        let page = FramePage::from_joined(None, None, 7);
        assert!(page.frames.is_empty());
        assert_eq!(page.last_seq, 7);
    }
}
