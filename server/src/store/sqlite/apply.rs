//! Applying a batch of commands inside one transaction, on the writer's direct
//! connection ([`super::direct`]): guards, seq allocation, derived status and
//! interrupts, then the event rows with multi-row INSERTs. A batch of plain appends (the
//! token path) takes [`super::appends`], which advances every session of the batch with
//! one statement. Statements come from rusqlite's cache of prepared statements.

use std::sync::OnceLock;

use rusqlite::{params, params_from_iter, Connection, OptionalExtension, ToSql};

use super::guards::check_guard;
use crate::store::leases::LeaseTerms;
use crate::store::sql::interrupts::{INSERT_INTERRUPT, INSERT_RUN_END};
use crate::store::{derive_effects, Applied, Command, Guard, Rejection, RunEnd, StoreError};

/// Rows per multi-row INSERT at most (3 parameters each, far below SQLite's limit).
const INSERT_CHUNK: usize = 256;

/// Splits `items` into chunks whose sizes are powers of two no larger than `max` (a power
/// of two): full chunks first, then the rest by its binary digits. A multi-row statement
/// then has one of a handful of shapes, each prepared once and kept in the connection's
/// statement cache, instead of a new statement to parse for every batch size.
pub(super) fn shaped_chunks<T>(items: &[T], max: usize) -> impl Iterator<Item = &[T]> {
    let mut rest = items;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let size = max.min(1 << rest.len().ilog2());
        let (chunk, tail) = rest.split_at(size);
        rest = tail;
        Some(chunk)
    })
}

/// `(?, ?, …), (?, ?, …), …`: `rows` groups of `columns` placeholders.
pub(super) fn value_rows(rows: usize, columns: usize) -> String {
    let row = format!("({})", vec!["?"; columns].join(", "));
    vec![row; rows].join(", ")
}

/// A multi-row statement's SQL in each of its [`shaped_chunks`] sizes (powers of two up
/// to 256), each built the first time it is needed: the token path looks up a string
/// instead of formatting kilobytes of placeholders for every chunk.
pub(super) struct ShapedSql {
    build: fn(usize) -> String,
    built: [OnceLock<String>; 9],
}

impl ShapedSql {
    /// Shapes that `build` makes for a number of rows.
    pub const fn new(build: fn(usize) -> String) -> Self {
        Self {
            build,
            built: [const { OnceLock::new() }; 9],
        }
    }

    /// The SQL for `rows` rows (a power of two, at most 256).
    pub fn get(&self, rows: usize) -> &str {
        assert!(rows.is_power_of_two() && rows <= 256, "{rows} rows");
        self.built[rows.ilog2() as usize].get_or_init(|| (self.build)(rows))
    }
}

/// The events' multi-row INSERT.
static INSERT_EVENTS: ShapedSql = ShapedSql::new(|rows| {
    format!(
        "INSERT INTO events (session_id, seq, event) VALUES {}",
        value_rows(rows, 3)
    )
});

/// One batch in one `BEGIN IMMEDIATE … COMMIT` transaction; rolled back on error.
pub(super) fn apply_batch(
    conn: &Connection,
    lease: &LeaseTerms,
    batch: &[Command],
    now_ms: i64,
) -> Result<Vec<Applied>, StoreError> {
    conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
    let applied = apply_in_transaction(conn, lease, batch, now_ms).and_then(|applied| {
        conn.prepare_cached("COMMIT")?.execute([])?;
        Ok(applied)
    });
    if applied.is_err() && !conn.is_autocommit() {
        // Nothing was committed; leave the connection outside any transaction. A failed
        // rollback shows at the next batch's BEGIN.
        let _ = conn.execute_batch("ROLLBACK");
    }
    applied
}

/// Checks each guard and applies the commands that pass; rows are inserted at the end,
/// many per statement.
fn apply_in_transaction(
    conn: &Connection,
    lease: &LeaseTerms,
    batch: &[Command],
    now_ms: i64,
) -> Result<Vec<Applied>, StoreError> {
    if batch
        .iter()
        .all(|command| matches!(command.guard, Guard::Append))
    {
        return super::appends::apply_appends(conn, lease, batch, now_ms);
    }
    let mut applied = Vec::with_capacity(batch.len());
    let mut rows: Vec<(String, i64, &str)> = Vec::new();
    for command in batch {
        let session = command.session.to_string();
        if let Some(rejection) = check_guard(conn, lease, command, &session, now_ms)? {
            applied.push(Applied::Rejected(rejection));
            continue;
        }
        let Some(first_seq) = advance_session(conn, command, &session, now_ms)? else {
            applied.push(Applied::Rejected(Rejection::SessionMissing));
            continue;
        };
        for (offset, entry) in command.entries.iter().enumerate() {
            rows.push((
                session.clone(),
                first_seq + offset as i64,
                entry.json.as_str(),
            ));
        }
        applied.push(Applied::Committed {
            first_seq: first_seq as u64,
        });
    }
    insert_rows(conn, &rows)?;
    Ok(applied)
}

/// Inserts event rows `(session, seq, json)`, many per statement.
pub(super) fn insert_rows(
    conn: &Connection,
    rows: &[(String, i64, &str)],
) -> Result<(), StoreError> {
    for chunk in shaped_chunks(rows, INSERT_CHUNK) {
        let values = chunk
            .iter()
            .flat_map(|(session, seq, json)| [session as &dyn ToSql, seq, json]);
        conn.prepare_cached(INSERT_EVENTS.get(chunk.len()))?
            .execute(params_from_iter(values))?;
    }
    Ok(())
}

/// Bumps `last_seq` (and the derived status), records raised interrupts; returns the
/// first seq of the command's entries, or `None` if the session does not exist.
fn advance_session(
    conn: &Connection,
    command: &Command,
    session: &str,
    now_ms: i64,
) -> Result<Option<i64>, StoreError> {
    let effects = derive_effects(&command.entries);
    let count = command.entries.len() as i64;
    let last: Option<i64> = match &effects.status {
        Some((status, run_id)) => conn
            .prepare_cached(
                "UPDATE sessions SET last_seq = last_seq + ?, updated_at = ?, status = ?, \
                 active_run_id = ? WHERE id = ? RETURNING last_seq",
            )?
            .query_row(
                params![count, now_ms, status.as_str(), run_id, session],
                |row| row.get(0),
            )
            .optional()?,
        None => conn
            .prepare_cached(
                "UPDATE sessions SET last_seq = last_seq + ?, updated_at = coalesce(?, updated_at) \
                 WHERE id = ? RETURNING last_seq",
            )?
            .query_row(
                params![count, touches(command).then_some(now_ms), session],
                |row| row.get(0),
            )
            .optional()?,
    };
    let Some(last) = last else {
        return Ok(None);
    };
    insert_interrupts(conn, session, &effects.interrupts, now_ms)?;
    insert_run_ends(conn, session, last - count + 1, &effects.run_ends, now_ms)?;
    Ok(Some(last - count + 1))
}

/// Whether a command that changes no status still moves the session's `updated_at`: a
/// person's command does, a run's plain append (a token) does not.
fn touches(command: &Command) -> bool {
    !matches!(command.guard, Guard::Append)
}

/// Records the interrupts a command raised.
pub(super) fn insert_interrupts(
    conn: &Connection,
    session: &str,
    interrupts: &[(String, shared::Interrupt)],
    now_ms: i64,
) -> Result<(), StoreError> {
    for (run_id, interrupt) in interrupts {
        let json = serde_json::to_string(interrupt).expect("interrupts serialise");
        conn.prepare_cached(INSERT_INTERRUPT)?.execute(params![
            interrupt.id,
            session,
            run_id,
            interrupt.tool_call_id.as_deref().unwrap_or_default(),
            json,
            now_ms,
            crate::domain::deadline_ms(interrupt),
            interrupt.reason,
        ])?;
    }
    Ok(())
}

/// Records the runs a command ended (its entries got `first_seq`, …), so that a webhook
/// announcing each is owed in the same transaction.
pub(super) fn insert_run_ends(
    conn: &Connection,
    session: &str,
    first_seq: i64,
    ends: &[RunEnd],
    now_ms: i64,
) -> Result<(), StoreError> {
    for end in ends {
        let seq = first_seq + end.index as i64;
        conn.prepare_cached(INSERT_RUN_END)?.execute(params![
            format!("{session}:{seq}"),
            session,
            end.run_id,
            end.outcome,
            end.error.as_ref().map(|e| e.to_string()),
            now_ms,
        ])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::shaped_chunks;

    #[test]
    fn chunks_come_in_powers_of_two_and_cover_everything_in_order() {
        let items: Vec<usize> = (0..600).collect();
        let sizes: Vec<usize> = shaped_chunks(&items, 256).map(<[usize]>::len).collect();
        assert_eq!(sizes, [256, 256, 64, 16, 8]);
        let joined: Vec<usize> = shaped_chunks(&items, 256).flatten().copied().collect();
        assert_eq!(joined, items);
        assert_eq!(shaped_chunks::<u8>(&[], 256).count(), 0);
    }
}
