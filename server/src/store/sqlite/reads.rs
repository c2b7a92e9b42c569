//! Reading a session's log: its older events from `events`, its newest from the memory of
//! the tail ([`super::tail`]), as one contiguous run of seqs.
//!
//! The memory is read first, then the table: a fold that moves rows in between has
//! committed them to `events` before it drops them from memory, so the table read sees
//! them. A session's rows in memory are contiguous and follow everything in `events`, so
//! a read that starts inside them needs no query at all (a socket following a live
//! session, a run folding what was appended since its last model call).

use sqlx::SqlitePool;

use super::tail::{Tail, TailRow};
use crate::domain::SessionId;
use crate::store::{FramePage, StoreError, StoredEvent};

/// Up to `limit` events with `seq > after`, in seq order.
pub(super) async fn events_after(
    reads: &SqlitePool,
    tail: &Tail,
    id: SessionId,
    after: u64,
    limit: u32,
) -> Result<Vec<StoredEvent>, StoreError> {
    let held = tail.rows_after(id, after, limit as usize);
    let stored = |row: TailRow| StoredEvent {
        seq: row.seq,
        json: row.json.to_string(),
    };
    if starts_at(&held, after) {
        return Ok(held.into_iter().map(stored).collect());
    }
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "SELECT seq, event FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
    )
    .bind(id.to_string())
    .bind(after.min(i64::MAX as u64) as i64)
    .bind(limit)
    .fetch_all(reads)
    .await?;
    let mut events: Vec<StoredEvent> = rows
        .into_iter()
        .map(|(seq, json)| StoredEvent {
            seq: seq as u64,
            json,
        })
        .collect();
    let last = events.last().map_or(after, |event| event.seq);
    events.extend(held.into_iter().filter(|row| row.seq > last).map(stored));
    events.truncate(limit as usize);
    Ok(events)
}

/// Up to `limit` frames of events with `seq > after`: those in `events` built by SQLite
/// in one value per page (about five times faster to read than the rows themselves), the
/// rest from memory. The frame text must match [`crate::eventlog::event_frame`] (a test
/// checks it).
pub(super) async fn frames_after(
    reads: &SqlitePool,
    tail: &Tail,
    id: SessionId,
    after: u64,
    limit: u32,
) -> Result<FramePage, StoreError> {
    let held = tail.rows_after(id, after, limit as usize);
    let mut page = if starts_at(&held, after) {
        FramePage {
            frames: Vec::with_capacity(held.len()),
            last_seq: after,
        }
    } else {
        stored_frames(reads, id, after, limit).await?
    };
    for row in held {
        if page.frames.len() == limit as usize {
            break;
        }
        if row.seq == page.last_seq + 1 {
            page.frames.push(FramePage::frame(row.seq, &row.json));
            page.last_seq = row.seq;
        }
    }
    Ok(page)
}

/// Whether rows held in memory start right after `after` (the table has nothing to add).
fn starts_at(held: &[TailRow], after: u64) -> bool {
    held.first().is_some_and(|row| row.seq == after + 1)
}

/// A page of frames from `events`, built by SQLite in one row.
async fn stored_frames(
    reads: &SqlitePool,
    id: SessionId,
    after: u64,
    limit: u32,
) -> Result<FramePage, StoreError> {
    let row: (i64, Option<i64>, Option<String>) = sqlx::query_as(
        "SELECT count(*), max(seq), group_concat(frame, char(30)) FROM ( \
           SELECT seq, '{\"kind\":\"event\",\"seq\":' || seq || ',\"event\":' || event || '}' AS frame \
           FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?)",
    )
    .bind(id.to_string())
    .bind(after.min(i64::MAX as u64) as i64)
    .bind(limit)
    .fetch_one(reads)
    .await?;
    let (count, last, joined) = row;
    Ok(FramePage::from_joined(
        joined.filter(|_| count > 0),
        last,
        after,
    ))
}
