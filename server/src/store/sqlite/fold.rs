//! Moving the log's tail into `events`.
//!
//! A commit appends its events to `events_tail` ([`super::tail`]); a fold copies whole
//! sessions' rows into `events` from memory with `INSERT OR IGNORE` (a row already
//! copied is one event, not two) and brings their `last_seq` up to date, in one
//! transaction; rows below the lowest position still held are then deleted from the tail
//! table in order. Opening a store, and taking the log over before a store's first write,
//! fold the whole table, so a store's memory of the tail starts from an empty table.
//!
//! Everything here runs inside the caller's transaction on the writer's connection.

use rusqlite::{params_from_iter, Connection, OptionalExtension, ToSql};

use super::shaped::{shaped_chunks, value_rows, ShapedSql};
use super::tail::FoldPlan;
use crate::domain::SessionId;
use crate::store::StoreError;

/// Rows per fold statement at most (3 parameters each).
const ROWS_PER_STATEMENT: usize = 256;
/// Rows one trim deletes at most (they are whole pages at the start of the table).
const TRIM_ROWS: i64 = 1024;

/// Copies rows (session, seq, event) into `events`; a row already there stays as it is.
static FOLD_ROWS: ShapedSql = ShapedSql::new(|rows| {
    format!(
        "INSERT OR IGNORE INTO events (session_id, seq, event) VALUES {}",
        value_rows(rows, 3)
    )
});

/// Moves every row of the tail table into `events`, brings each of those sessions'
/// `last_seq` up to its last event and empties the table. Returns the position the next
/// appended row gets.
pub(super) fn fold_all(conn: &Connection) -> Result<i64, StoreError> {
    conn.execute_batch(
        "INSERT OR IGNORE INTO events (session_id, seq, event) \
           SELECT session_id, seq, event FROM events_tail ORDER BY session_id, seq; \
         UPDATE sessions SET last_seq = t.last \
           FROM (SELECT session_id, max(seq) AS last FROM events_tail GROUP BY session_id) AS t \
           WHERE sessions.id = t.session_id AND sessions.last_seq < t.last;",
    )?;
    let next: i64 = conn.query_row(
        "SELECT coalesce(max(position), 0) + 1 FROM events_tail",
        [],
        |row| row.get(0),
    )?;
    conn.execute("DELETE FROM events_tail", [])?;
    Ok(next)
}

/// Copies the planned rows (from memory: the same rows as in the tail table) into
/// `events` and advances their sessions' `last_seq`; rows another connection folded
/// already are kept once. Returns the sessions deleted meanwhile (their tail rows went
/// with them), which are skipped.
pub(super) fn fold_rows(conn: &Connection, plan: &FoldPlan) -> Result<Vec<SessionId>, StoreError> {
    let mut gone = Vec::new();
    for (session, rows) in &plan.sessions {
        let id = session.to_string();
        let exists = conn
            .prepare_cached("SELECT 1 FROM sessions WHERE id = ?")?
            .exists([&id])?;
        if !exists {
            gone.push(*session);
            continue;
        }
        let Some(last) = rows.last().map(|row| row.seq) else {
            continue;
        };
        for chunk in shaped_chunks(rows, ROWS_PER_STATEMENT) {
            let values = chunk
                .iter()
                .flat_map(|row| [&id as &dyn ToSql, &row.seq, &row.json]);
            conn.prepare_cached(FOLD_ROWS.get(chunk.len()))?
                .execute(params_from_iter(values))?;
        }
        conn.prepare_cached("UPDATE sessions SET last_seq = ?1 WHERE id = ?2 AND last_seq < ?1")?
            .execute((last as i64, &id))?;
    }
    Ok(gone)
}

/// Deletes tail rows below `below` (all folded), at most [`TRIM_ROWS`] of them from the
/// lowest; returns the position below which none is left.
pub(super) fn trim(conn: &Connection, below: i64) -> Result<i64, StoreError> {
    let lowest: Option<i64> = conn
        .prepare_cached("SELECT position FROM events_tail ORDER BY position LIMIT 1")?
        .query_row([], |row| row.get(0))
        .optional()?;
    let Some(lowest) = lowest.filter(|lowest| *lowest < below) else {
        return Ok(below);
    };
    let end = below.min(lowest + TRIM_ROWS);
    conn.prepare_cached("DELETE FROM events_tail WHERE position < ?")?
        .execute([end])?;
    Ok(end)
}
