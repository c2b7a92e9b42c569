//! Reading a session's log: its older events from `events`, its newest from the memory of
//! the tail ([`super::tail`]), as one contiguous run of seqs; a branch's from each session
//! of its lineage in turn ([`super::branches`]).
//!
//! The memory is read first, then the table: a fold that moves rows in between has
//! committed them to `events` before it drops them from memory, so the table read sees
//! them. A session's rows in memory are contiguous and follow everything in `events`, so
//! a read that starts inside them needs no query at all (a socket following a live
//! session, a run folding what was appended since its last model call).

use rusqlite::params;

use super::branches::lineage;
use super::direct::Readers;
use super::tail::{Tail, TailRow};
use crate::domain::SessionId;
use crate::store::{FramePage, Replayed, StoreError, StoredEvent};

/// Up to `limit` events with `seq > after`, in seq order.
pub(super) async fn events_after(
    reads: &Readers,
    tail: &Tail,
    id: SessionId,
    after: u64,
    limit: u32,
) -> Result<Vec<StoredEvent>, StoreError> {
    let mut events = Vec::new();
    let mut sink = |seq: u64, json: &str| {
        events.push(StoredEvent {
            seq,
            json: json.to_owned(),
        })
    };
    replay_after(reads, tail, id, after, limit, &mut sink).await?;
    Ok(events)
}

/// Up to `limit` frames of events with `seq > after`, written one after another into one
/// text that the page's frames share (one copy of each event).
pub(super) async fn frames_after(
    reads: &Readers,
    tail: &Tail,
    id: SessionId,
    after: u64,
    limit: u32,
) -> Result<FramePage, StoreError> {
    let mut text = String::new();
    let mut ends = Vec::new();
    let mut sink = |seq: u64, json: &str| {
        FramePage::write_frame(&mut text, seq, json);
        ends.push(text.len());
    };
    let replayed = replay_after(reads, tail, id, after, limit, &mut sink).await?;
    Ok(FramePage::from_text(text, &ends, replayed.last_seq))
}

/// Hands up to `limit` events of the session's history with `seq > after` to `sink`, in
/// seq order. A branch's history is read from each session of its lineage in turn (the
/// shared prefix from the rows that hold it); a read that starts in the session's own rows
/// held in memory needs no query at all.
pub(super) async fn replay_after(
    reads: &Readers,
    tail: &Tail,
    id: SessionId,
    after: u64,
    limit: u32,
    sink: &mut (dyn FnMut(u64, &str) + Send),
) -> Result<Replayed, StoreError> {
    let held = tail.rows_after(id, after, limit as usize);
    if starts_at(&held, after) {
        return replay_own(reads, held, id, after, limit, sink).await;
    }
    let line = reads.with(|conn| lineage(conn, id)).await?;
    let mut replayed = Replayed {
        count: 0,
        last_seq: after,
    };
    for (session, upto) in line {
        let wanted = u64::from(limit - replayed.count).min(upto.saturating_sub(replayed.last_seq));
        if wanted == 0 {
            continue;
        }
        let wanted = wanted as u32;
        let held = tail.rows_after(session, replayed.last_seq, wanted as usize);
        let read = replay_own(reads, held, session, replayed.last_seq, wanted, sink).await?;
        replayed = Replayed {
            count: replayed.count + read.count,
            last_seq: read.last_seq,
        };
        // A part that ends early ends the read: what follows must not skip over a gap.
        if replayed.count == limit || (read.count < wanted && upto != u64::MAX) {
            break;
        }
    }
    Ok(replayed)
}

/// Hands up to `limit` of one session's own events with `seq > after` to `sink` as they
/// are read: those in `events` straight from SQLite's row (its text checked as UTF-8, not
/// copied), then `held`, its rows in memory after `after` (read before the table, see the
/// module's docs).
async fn replay_own(
    reads: &Readers,
    held: Vec<TailRow>,
    id: SessionId,
    after: u64,
    limit: u32,
    sink: &mut (dyn FnMut(u64, &str) + Send),
) -> Result<Replayed, StoreError> {
    let mut replayed = Replayed {
        count: 0,
        last_seq: after,
    };
    if !starts_at(&held, after) {
        replayed = reads
            .with(|conn| {
                let mut select = conn.prepare_cached(EVENTS_AFTER)?;
                let mut rows = select.query(params![id.to_string(), sql_seq(after), limit])?;
                let mut replayed = replayed;
                while let Some(row) = rows.next()? {
                    let seq = row.get::<_, i64>(0)? as u64;
                    let bytes = row.get_ref(1)?.as_bytes().map_err(rusqlite::Error::from)?;
                    let json = simdutf8::basic::from_utf8(bytes)
                        .map_err(|_| StoreError::Corrupt(format!("event {seq} is not UTF-8")))?;
                    sink(seq, json);
                    replayed = Replayed {
                        count: replayed.count + 1,
                        last_seq: seq,
                    };
                }
                Ok(replayed)
            })
            .await?;
    }
    for row in held {
        if replayed.count == limit {
            break;
        }
        if row.seq == replayed.last_seq + 1 {
            sink(row.seq, &row.json);
            replayed = Replayed {
                count: replayed.count + 1,
                last_seq: row.seq,
            };
        }
    }
    Ok(replayed)
}

/// Whether rows held in memory start right after `after` (the table has nothing to add).
fn starts_at(held: &[TailRow], after: u64) -> bool {
    held.first().is_some_and(|row| row.seq == after + 1)
}

/// A session's events after a seq, oldest first, at most so many.
const EVENTS_AFTER: &str =
    "SELECT seq, event FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?";

/// A seq as SQLite's integer.
fn sql_seq(seq: u64) -> i64 {
    seq.min(i64::MAX as u64) as i64
}
