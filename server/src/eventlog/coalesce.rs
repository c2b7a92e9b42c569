//! Deltas that share a commit share an event. When one batch holds several content
//! deltas in a row of the same message (`TEXT_MESSAGE_CONTENT`,
//! `REASONING_MESSAGE_CONTENT`) or of the same call's arguments (`TOOL_CALL_ARGS`), each a
//! run's plain append, they are committed and sent as one event whose delta is theirs
//! joined, in order (AG-UI allows any chunking). Under load a batch holds more of each
//! message, so the cost per token falls as the load rises; at low load every delta is its
//! own batch and nothing changes. Nothing is held back for this: only what already waits
//! together is joined, so a message's first token goes out as soon as it would have.
//!
//! Seqs stay gapless (the joined event takes one), the text a viewer assembles is the
//! same byte for byte, and every producer of a joined delta hears the one outcome. A
//! joined delta stops growing at [`MAX_JOINED`] bytes, so a frame stays small enough for
//! a slow viewer's buffers (a real token is a few bytes: that is hundreds of them).

use std::collections::HashMap;

use shared::EventBody;

use super::streams::{Append, Reply, StreamId};
use crate::domain::SessionId;
use crate::store::{Command, LogEntry};

/// The longest delta joining makes, in bytes (a single longer one is left as it is).
pub const MAX_JOINED: usize = 1024;

/// A command for the store and everyone who waits for it.
pub(super) struct Joined {
    pub command: Command,
    pub stream: Option<StreamId>,
    pub replies: Vec<Reply>,
}

impl Joined {
    /// An append as it came, joined with nothing.
    pub fn alone(append: Append) -> Self {
        Self {
            command: append.command,
            stream: append.stream,
            replies: vec![append.reply],
        }
    }
}

/// The batch's appends with each session's consecutive deltas of one message joined;
/// every session's commands keep their order.
pub(super) fn coalesce(appends: Vec<Append>) -> Vec<Joined> {
    let mut joined: Vec<Joined> = Vec::with_capacity(appends.len());
    // Each session's latest command in `joined`, while it is a delta that may take more.
    let mut open: HashMap<SessionId, usize> = HashMap::new();
    for append in appends {
        let session = append.command.session;
        if let Some(key) = delta_key(&append.command) {
            let adds = delta_len(&append.command);
            let into = open.get(&session).copied().filter(|&at| {
                let earlier = &joined[at];
                earlier.stream == append.stream
                    && delta_key(&earlier.command) == Some(key)
                    && delta_len(&earlier.command) + adds <= MAX_JOINED
            });
            if let Some(at) = into {
                join(&mut joined[at], append);
                continue;
            }
            open.insert(session, joined.len());
        } else {
            open.remove(&session);
        }
        joined.push(Joined::alone(append));
    }
    // A command that took more deltas (it has their producers too) gets its JSON made
    // again, once, now that its delta is whole.
    for grown in joined.iter_mut().filter(|j| j.replies.len() > 1) {
        grown
            .command
            .entries
            .iter_mut()
            .for_each(LogEntry::reserialise);
    }
    joined
}

/// What a delta may be joined with: its kind and the message or call it belongs to.
/// `None` for a command that is not a run's lone delta.
fn delta_key(command: &Command) -> Option<(&'static str, &str)> {
    let [entry] = command.entries.as_slice() else {
        return None;
    };
    if !command.is_plain_append() {
        return None;
    }
    match &entry.event.body {
        EventBody::TextMessageContent { message_id, .. } => Some(("text", message_id)),
        EventBody::ReasoningMessageContent { message_id, .. } => Some(("reasoning", message_id)),
        EventBody::ToolCallArgs { tool_call_id, .. } => Some(("args", tool_call_id)),
        _ => None,
    }
}

/// The length of a delta command's delta, in bytes.
fn delta_len(command: &Command) -> usize {
    let body = command.entries.first().map(|entry| &entry.event.body);
    body.and_then(EventBody::content_delta).map_or(0, str::len)
}

/// Appends `later`'s delta to `into`'s event (same kind and id, checked by the caller);
/// the event's JSON is made again by the caller once the joining is done.
fn join(into: &mut Joined, later: Append) {
    let more = later.command.entries.first().map(|e| &e.event.body);
    let more = more.and_then(EventBody::content_delta).unwrap_or_default();
    let body = into.command.entries.first_mut().map(|e| &mut e.event.body);
    if let Some(delta) = body.and_then(EventBody::content_delta_mut) {
        delta.push_str(more);
    }
    into.replies.push(later.reply);
}

#[cfg(test)]
mod tests {
    use shared::Event;
    use tokio::sync::oneshot;

    use super::*;
    use crate::store::Guard;

    fn append(session: SessionId, body: EventBody, stream: Option<StreamId>) -> Append {
        Append {
            command: Command {
                session,
                guard: Guard::Append,
                entries: vec![LogEntry::new(Event::at(body, 7))],
                state: None,
            },
            stream,
            reply: oneshot::channel().0,
        }
    }

    fn text(message: &str, delta: &str) -> EventBody {
        EventBody::TextMessageContent {
            message_id: message.into(),
            delta: delta.into(),
        }
    }

    fn deltas(joined: &[Joined]) -> Vec<(SessionId, String, usize)> {
        joined
            .iter()
            .map(|j| {
                let json = j.command.entries[0].json.clone();
                (j.command.session, json, j.replies.len())
            })
            .collect()
    }

    #[test]
    fn a_session_s_deltas_in_a_row_join_and_everything_else_keeps_its_place() {
        let (a, b) = (SessionId::generate(), SessionId::generate());
        let [s1, s2, s3] = [(); 3].map(|()| Some(StreamId::fresh()));
        let end = EventBody::TextMessageEnd {
            message_id: "m1".into(),
        };
        let batch = vec![
            append(a, text("m1", "Hel"), s1),
            append(b, text("m9", "x"), s2),
            append(a, text("m1", "lo"), s1),
            append(a, text("m1", ", "), s1),
            append(b, text("m9", "y"), s2),
            append(a, end, s1),
            append(a, text("m1", "again"), s1),
            // Another message, or another stream, starts a command of its own.
            append(a, text("m2", "new"), s1),
            append(a, text("m2", "other"), s3),
        ];
        let joined = coalesce(batch);
        let shown: Vec<(bool, String, usize)> = deltas(&joined)
            .into_iter()
            .map(|(session, json, replies)| {
                let event: Event = serde_json::from_str(&json).unwrap();
                let what = match event.body {
                    EventBody::TextMessageContent { delta, .. } => delta,
                    other => other.type_name().into(),
                };
                assert_eq!(event.timestamp, Some(7), "the first delta's time");
                (session == a, what, replies)
            })
            .collect();
        assert_eq!(
            shown,
            [
                (true, "Hello, ".to_string(), 3),
                (false, "xy".to_string(), 2),
                (true, "TEXT_MESSAGE_END".to_string(), 1),
                (true, "again".to_string(), 1),
                (true, "new".to_string(), 1),
                (true, "other".to_string(), 1),
            ]
        );
    }

    #[test]
    fn a_joined_delta_stops_growing_at_its_limit() {
        let a = SessionId::generate();
        let word = "w".repeat(400);
        let batch = (0..5).map(|_| append(a, text("m1", &word), None)).collect();
        let sizes: Vec<usize> = coalesce(batch)
            .iter()
            .map(|j| delta_len(&j.command))
            .collect();
        assert_eq!(sizes, [800, 800, 400]);
    }

    #[test]
    fn guarded_or_several_entry_commands_never_join() {
        let a = SessionId::generate();
        let mut guarded = append(a, text("m1", "b"), None);
        guarded.command.guard = Guard::InRun { run_id: "r".into() };
        let mut two = append(a, text("m1", "c"), None);
        two.command
            .entries
            .push(LogEntry::new(Event::at(text("m1", "d"), 7)));
        let batch = vec![append(a, text("m1", "a"), None), guarded, two];
        assert_eq!(coalesce(batch).len(), 3);
    }
}
