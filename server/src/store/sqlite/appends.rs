//! The fast path for a batch of plain appends (`Guard::Append` only): one
//! `UPDATE … FROM (VALUES …) RETURNING` advances every session of the batch at once
//! (seqs, derived status), instead of one statement per command. Seqs are then handed
//! out in command order, so a session's commands keep their order within the batch.

use std::collections::{HashMap, HashSet};

use rusqlite::{params_from_iter, Connection, OptionalExtension, ToSql};

use super::apply::{
    insert_interrupts, insert_rows, insert_run_ends, shaped_chunks, value_rows, ShapedSql,
};
use crate::store::advances::{advances, Advance};
use crate::store::leases::LeaseTerms;
use crate::store::{derive_effects, Applied, Command, Effects, Rejection, StoreError};

/// Sessions per UPDATE at most (4 parameters each, far below SQLite's limit).
const SESSIONS_PER_UPDATE: usize = 256;

/// Advances the sessions of a chunk whose run lease no other instance holds (`updated_at`
/// moves with the status, not with each token; see `advances`). The VALUES rows come
/// first in the statement, so their parameters are 1..4n; the time and the owner follow.
static ADVANCE_SESSIONS: ShapedSql = ShapedSql::new(|rows| {
    format!(
        "WITH v(id, count, status, run_id) AS (VALUES {}) \
         UPDATE sessions SET last_seq = sessions.last_seq + v.count, \
         updated_at = CASE WHEN v.status IS NULL THEN sessions.updated_at ELSE ? END, \
         status = coalesce(v.status, sessions.status), \
         active_run_id = CASE WHEN v.status IS NULL THEN sessions.active_run_id ELSE v.run_id END \
         FROM v WHERE sessions.id = v.id AND NOT EXISTS (SELECT 1 FROM run_leases l \
         WHERE l.session_id = sessions.id AND l.owner <> ?) \
         RETURNING sessions.id, sessions.last_seq",
        value_rows(rows, 4)
    )
});

/// Applies a batch whose commands are all plain appends.
pub(super) fn apply_appends(
    conn: &Connection,
    lease: &LeaseTerms,
    batch: &[Command],
    now_ms: i64,
) -> Result<Vec<Applied>, StoreError> {
    let effects: Vec<Effects> = batch.iter().map(|c| derive_effects(&c.entries)).collect();
    let advances = advances(batch, &effects);
    let mut next_seq: HashMap<String, i64> = HashMap::with_capacity(advances.len());
    let counts: HashMap<&str, i64> = advances.iter().map(|a| (a.id.as_str(), a.count)).collect();
    for chunk in shaped_chunks(&advances, SESSIONS_PER_UPDATE) {
        for (id, last) in update_sessions(conn, &lease.owner, chunk, now_ms)? {
            let count = counts.get(id.as_str()).copied().unwrap_or(0);
            next_seq.insert(id, last - count + 1);
        }
    }
    let skipped: Vec<&str> = advances
        .iter()
        .map(|a| a.id.as_str())
        .filter(|id| !next_seq.contains_key(*id))
        .collect();
    let fenced = existing(conn, &skipped)?;
    let mut applied = Vec::with_capacity(batch.len());
    let mut rows: Vec<(String, i64, &str)> = Vec::new();
    for (command, effects) in batch.iter().zip(&effects) {
        let session = command.session.to_string();
        let Some(next) = next_seq.get_mut(&session) else {
            let rejection = match fenced.contains(&session) {
                true => Rejection::LeaseLost,
                false => Rejection::SessionMissing,
            };
            applied.push(Applied::Rejected(rejection));
            continue;
        };
        let first_seq = *next;
        *next += command.entries.len() as i64;
        for (offset, entry) in command.entries.iter().enumerate() {
            rows.push((
                session.clone(),
                first_seq + offset as i64,
                entry.json.as_str(),
            ));
        }
        insert_interrupts(conn, &session, &effects.interrupts, now_ms)?;
        insert_run_ends(conn, &session, first_seq, &effects.run_ends, now_ms)?;
        applied.push(Applied::Committed {
            first_seq: first_seq as u64,
        });
    }
    insert_rows(conn, &rows)?;
    Ok(applied)
}

/// Of the sessions a batch could not advance, those that exist (so another instance
/// holds their run lease); the others are gone.
fn existing(conn: &Connection, ids: &[&str]) -> Result<HashSet<String>, StoreError> {
    let mut found = HashSet::new();
    let mut select = conn.prepare_cached("SELECT id FROM sessions WHERE id = ?")?;
    for id in ids {
        let row: Option<String> = select.query_row([id], |row| row.get(0)).optional()?;
        found.extend(row);
    }
    Ok(found)
}

/// Advances the sessions of one chunk whose run lease no other instance holds
/// ([`ADVANCE_SESSIONS`]); returns `(id, new last_seq)` of those it advanced.
fn update_sessions(
    conn: &Connection,
    owner: &str,
    chunk: &[Advance],
    now_ms: i64,
) -> Result<Vec<(String, i64)>, StoreError> {
    let statuses: Vec<(Option<&str>, Option<&str>)> = chunk
        .iter()
        .map(|advance| match &advance.status {
            Some((status, run_id)) => (Some(status.as_str()), run_id.as_deref()),
            None => (None, None),
        })
        .collect();
    let values = chunk
        .iter()
        .zip(&statuses)
        .flat_map(|(advance, (status, run_id))| {
            [&advance.id as &dyn ToSql, &advance.count, status, run_id]
        })
        .chain([&now_ms as &dyn ToSql, &owner]);
    let mut update = conn.prepare_cached(ADVANCE_SESSIONS.get(chunk.len()))?;
    let rows = update.query_map(params_from_iter(values), |row| {
        Ok((row.get(0)?, row.get(1)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
