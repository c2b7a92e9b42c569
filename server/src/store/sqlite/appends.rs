//! The fast path for a batch of plain appends (`Guard::Append` only): one
//! `UPDATE … FROM (VALUES …) RETURNING` advances every session of the batch at once
//! (seqs, derived status), instead of one statement per command. Seqs are then handed
//! out in command order, so a session's commands keep their order within the batch.

use std::collections::HashMap;

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use super::apply::{insert_interrupts, insert_rows, insert_run_ends, shaped_chunks};
use crate::store::advances::{advances, Advance};
use crate::store::leases::LeaseTerms;
use crate::store::{derive_effects, Applied, Command, Effects, Rejection, StoreError};

/// Sessions per UPDATE at most (4 parameters each, far below SQLite's limit).
const SESSIONS_PER_UPDATE: usize = 256;

/// Applies a batch whose commands are all plain appends.
pub(super) async fn apply_appends(
    conn: &mut SqliteConnection,
    lease: &LeaseTerms,
    batch: &[Command],
    now_ms: i64,
) -> Result<Vec<Applied>, StoreError> {
    let effects: Vec<Effects> = batch.iter().map(|c| derive_effects(&c.entries)).collect();
    let advances = advances(batch, &effects);
    let mut next_seq: HashMap<String, i64> = HashMap::with_capacity(advances.len());
    let counts: HashMap<&str, i64> = advances.iter().map(|a| (a.id.as_str(), a.count)).collect();
    for chunk in shaped_chunks(&advances, SESSIONS_PER_UPDATE) {
        for (id, last) in update_sessions(conn, &lease.owner, chunk, now_ms).await? {
            let count = counts.get(id.as_str()).copied().unwrap_or(0);
            next_seq.insert(id, last - count + 1);
        }
    }
    let skipped: Vec<&str> = advances
        .iter()
        .map(|a| a.id.as_str())
        .filter(|id| !next_seq.contains_key(*id))
        .collect();
    let fenced = existing(conn, &skipped).await?;
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
        insert_interrupts(conn, &session, &effects.interrupts, now_ms).await?;
        insert_run_ends(conn, &session, first_seq, &effects.run_ends, now_ms).await?;
        applied.push(Applied::Committed {
            first_seq: first_seq as u64,
        });
    }
    insert_rows(conn, &rows).await?;
    Ok(applied)
}

/// Of the sessions a batch could not advance, those that exist (so another instance
/// holds their run lease); the others are gone.
async fn existing(
    conn: &mut SqliteConnection,
    ids: &[&str],
) -> Result<std::collections::HashSet<String>, StoreError> {
    let mut found = std::collections::HashSet::new();
    for id in ids {
        let row: Option<(String,)> = sqlx::query_as("SELECT id FROM sessions WHERE id = $1")
            .bind(*id)
            .fetch_optional(&mut *conn)
            .await?;
        found.extend(row.map(|(id,)| id));
    }
    Ok(found)
}

/// Advances the sessions of one chunk whose run lease no other instance holds; returns
/// `(id, new last_seq)` of those it advanced.
async fn update_sessions(
    conn: &mut SqliteConnection,
    owner: &str,
    chunk: &[Advance],
    now_ms: i64,
) -> Result<Vec<(String, i64)>, StoreError> {
    // `updated_at` moves with the status, not with each token (see `advances`).
    let mut update = QueryBuilder::<Sqlite>::new(
        "UPDATE sessions SET last_seq = last_seq + v.column2, \
         updated_at = CASE WHEN v.column3 IS NULL THEN updated_at ELSE ",
    );
    update.push_bind(now_ms);
    update.push(
        " END, status = coalesce(v.column3, status), \
         active_run_id = CASE WHEN v.column3 IS NULL THEN active_run_id ELSE v.column4 END \
         FROM (",
    );
    update.push_values(chunk, |mut row, advance| {
        let (status, run_id) = match &advance.status {
            Some((status, run_id)) => (Some(status.as_str()), run_id.clone()),
            None => (None, None),
        };
        row.push_bind(advance.id.as_str())
            .push_bind(advance.count)
            .push_bind(status)
            .push_bind(run_id);
    });
    update.push(
        ") AS v WHERE sessions.id = v.column1 AND NOT EXISTS (SELECT 1 FROM run_leases l \
         WHERE l.session_id = sessions.id AND l.owner <> ",
    );
    update.push_bind(owner);
    update.push(") RETURNING sessions.id, sessions.last_seq");
    Ok(update.build_query_as().fetch_all(&mut *conn).await?)
}
