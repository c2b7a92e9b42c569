//! Moving the log's tail into `events`, and which store may append to the log.
//!
//! A commit appends its events to `events_tail` ([`super::tail`]); a fold copies a few
//! sessions' oldest rows into `events` from memory with `INSERT OR IGNORE` (a row already
//! copied is one event, not two) and brings their `last_seq` up to date, in one
//! transaction; rows below the lowest position still held are then deleted from the tail
//! table in order. Opening a store, and taking the log over before a store's first write,
//! fold the whole table, so a store's memory of the tail starts from an empty table.
//!
//! Everything here runs inside the caller's transaction on the writer's connection.

use rusqlite::{params_from_iter, Connection, OptionalExtension, ToSql};

use super::apply::{shaped_chunks, value_rows, ShapedSql};
use super::tail::FoldPlan;
use crate::domain::SessionId;
use crate::store::{ErrorKind, StoreError};

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

/// Whose mark is on the log, as a store sees it at the start of a write.
pub(super) enum Mark {
    /// This store's: it appends, and its memory of the tail is the truth.
    Ours,
    /// Nobody's, or another store's that this one never displaced: this store may take
    /// the log over.
    Free,
    /// Another store's, after this one had appended: it must stop writing.
    Displaced,
}

/// Reads the log's mark for the store `token`, which has (or has not) appended before.
pub(super) fn read_mark(
    conn: &Connection,
    token: &str,
    appended_before: bool,
) -> Result<Mark, StoreError> {
    let owner: Option<String> = conn
        .prepare_cached("SELECT owner FROM log_writer WHERE id = 1")?
        .query_row([], |row| row.get(0))
        .optional()?;
    Ok(match owner {
        Some(owner) if owner == token => Mark::Ours,
        Some(_) if appended_before => Mark::Displaced,
        _ => Mark::Free,
    })
}

/// Puts the store `token`'s mark on the log.
pub(super) fn put_mark(conn: &Connection, token: &str) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO log_writer (id, owner) VALUES (1, ?) \
         ON CONFLICT (id) DO UPDATE SET owner = excluded.owner",
    )?
    .execute([token])?;
    Ok(())
}

/// The error of a store whose log another store took over.
pub(super) fn displaced() -> StoreError {
    StoreError::of_kind(
        ErrorKind::Fatal,
        "another Tandem process took this database's log over (SQLite serves one instance \
         per file); this one no longer writes to it"
            .into(),
    )
}

/// `(?, ?, ?, ?), …`: the tail INSERT's rows (position, session, seq, event).
pub(super) static INSERT_TAIL: ShapedSql = ShapedSql::new(|rows| {
    format!(
        "INSERT INTO events_tail (position, session_id, seq, event) VALUES {}",
        value_rows(rows, 4)
    )
});
