//! Reading a session's log: its older events from `events`, its newest from the memory of
//! the tail ([`super::tail`]), as one contiguous run of seqs.
//!
//! The memory is read first, then the table: a fold that moves rows in between has
//! committed them to `events` before it drops them from memory, so the table read sees
//! them. A session's rows in memory are contiguous and follow everything in `events`, so
//! a read that starts inside them needs no query at all (a socket following a live
//! session, a run folding what was appended since its last model call).

use rusqlite::params;
use sqlx::SqlitePool;

use super::direct::with_reader;
use super::tail::{Tail, TailRow};
use crate::domain::SessionId;
use crate::store::{FramePage, Replayed, StoreError, StoredEvent};

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
    let mut events = with_reader(reads, |conn| {
        let mut select = conn.prepare_cached(EVENTS_AFTER)?;
        let mut rows = select.query(params![id.to_string(), sql_seq(after), limit])?;
        let mut events = Vec::new();
        while let Some(row) = rows.next()? {
            events.push(StoredEvent {
                seq: row.get::<_, i64>(0)? as u64,
                json: row.get(1)?,
            });
        }
        Ok(events)
    })
    .await?;
    let last = events.last().map_or(after, |event| event.seq);
    events.extend(held.into_iter().filter(|row| row.seq > last).map(stored));
    events.truncate(limit as usize);
    Ok(events)
}

/// Up to `limit` frames of events with `seq > after`: those in `events` read through
/// rusqlite into one text, the rest from memory.
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

/// Hands up to `limit` events with `seq > after` to `sink` as they are read: those in
/// `events` straight from SQLite's row (its text checked as UTF-8, not copied), then
/// those in memory.
pub(super) async fn replay_after(
    reads: &SqlitePool,
    tail: &Tail,
    id: SessionId,
    after: u64,
    limit: u32,
    sink: &mut (dyn FnMut(u64, &str) + Send),
) -> Result<Replayed, StoreError> {
    let held = tail.rows_after(id, after, limit as usize);
    let mut replayed = Replayed {
        count: 0,
        last_seq: after,
    };
    if !starts_at(&held, after) {
        replayed = with_reader(reads, |conn| {
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

/// A page of frames from `events`: each row's frame is written straight into one text, which
/// the page's frames share (one copy of each event, no frame built in SQL).
async fn stored_frames(
    reads: &SqlitePool,
    id: SessionId,
    after: u64,
    limit: u32,
) -> Result<FramePage, StoreError> {
    let (text, ends, last) = with_reader(reads, |conn| {
        let mut select = conn.prepare_cached(EVENTS_AFTER)?;
        let mut rows = select.query(params![id.to_string(), sql_seq(after), limit])?;
        let mut text = String::new();
        let mut ends = Vec::new();
        let mut last = after;
        while let Some(row) = rows.next()? {
            let seq = row.get::<_, i64>(0)? as u64;
            let event = row.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?;
            FramePage::write_frame(&mut text, seq, event);
            ends.push(text.len());
            last = seq;
        }
        Ok((text, ends, last))
    })
    .await?;
    Ok(FramePage::from_text(text, &ends, last))
}

/// A session's events after a seq, oldest first, at most so many.
const EVENTS_AFTER: &str =
    "SELECT seq, event FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?";

/// A seq as SQLite's integer.
fn sql_seq(seq: u64) -> i64 {
    seq.min(i64::MAX as u64) as i64
}
