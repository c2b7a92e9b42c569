//! The fast path for a batch of plain appends (`Guard::Append` only): each session of the
//! batch is checked once (it exists, no other instance holds its run lease), its
//! commands get their seqs in order, and only a session whose status changes has its row
//! written (`updated_at` moves with the status, not with each token; see `advances`).
//! A token's commit then writes nothing but its rows at the end of the log's tail.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension};

use super::appended::Appended;
use super::raised::{add_spending, insert_interrupts, insert_run_ends};
use crate::domain::SessionId;
use crate::store::advances::advances;
use crate::store::guards::LeaseHolder;
use crate::store::leases::LeaseTerms;
use crate::store::sql::guards::LEASE_OWNER;
use crate::store::{derive_effects, Applied, Batch, Command, Effects, Rejection, StoreError};

/// Applies a batch whose commands are all plain appends.
pub(super) fn apply_appends<'a>(
    conn: &Connection,
    batch: Batch<'a>,
    appended: &mut Appended<'a>,
) -> Result<Vec<Applied>, StoreError> {
    let mut refusals: HashMap<SessionId, Option<Rejection>> = HashMap::new();
    for command in batch.commands {
        if let Entry::Vacant(entry) = refusals.entry(command.session) {
            entry.insert(refusal(conn, batch.lease, appended, command.session)?);
        }
    }
    let effects: Vec<Effects> = batch
        .commands
        .iter()
        .map(|c| derive_effects(&c.entries))
        .collect();
    let mut applied = Vec::with_capacity(batch.commands.len());
    for (command, effects) in batch.commands.iter().zip(&effects) {
        if let Some(Some(rejection)) = refusals.get(&command.session) {
            applied.push(Applied::Rejected(rejection.clone()));
            continue;
        }
        let Some(first_seq) = appended.push(conn, command)? else {
            applied.push(Applied::Rejected(Rejection::SessionMissing));
            continue;
        };
        let session = command.session.to_string();
        insert_interrupts(conn, &session, &effects.interrupts, batch.now_ms)?;
        insert_run_ends(
            conn,
            &session,
            first_seq as i64,
            &effects.run_ends,
            batch.now_ms,
        )?;
        add_spending(conn, &session, effects.spending, batch.now_ms)?;
        applied.push(Applied::Committed { first_seq });
    }
    write_statuses(
        conn,
        batch.commands,
        &effects,
        &refusals,
        appended,
        batch.now_ms,
    )?;
    Ok(applied)
}

/// Why a session's appends are refused, if they are: it is gone, or another instance
/// holds its run lease.
fn refusal(
    conn: &Connection,
    lease: &LeaseTerms,
    appended: &mut Appended<'_>,
    session: SessionId,
) -> Result<Option<Rejection>, StoreError> {
    if appended.last_seq(conn, session)?.is_none() {
        return Ok(Some(Rejection::SessionMissing));
    }
    let owner: Option<String> = conn
        .prepare_cached(LEASE_OWNER)?
        .query_row([session.to_string()], |row| row.get(0))
        .optional()?;
    Ok(match lease.holder(owner.as_deref()) {
        LeaseHolder::Other => Some(Rejection::LeaseLost),
        LeaseHolder::Nobody | LeaseHolder::Us => None,
    })
}

/// Writes the status each session's last status-changing command leaves, with its exact
/// `last_seq` and `updated_at`; sessions whose status did not change are not written.
fn write_statuses(
    conn: &Connection,
    batch: &[Command],
    effects: &[Effects],
    refusals: &HashMap<SessionId, Option<Rejection>>,
    appended: &mut Appended<'_>,
    now_ms: i64,
) -> Result<(), StoreError> {
    let ids: HashMap<String, SessionId> = batch
        .iter()
        .map(|command| (command.session.to_string(), command.session))
        .collect();
    for advance in advances(batch, effects) {
        let Some((status, run_id)) = &advance.status else {
            continue;
        };
        let session = ids[&advance.id];
        if !matches!(refusals.get(&session), Some(None)) {
            continue;
        }
        let Some(last) = appended.last_seq(conn, session)? else {
            continue;
        };
        conn.prepare_cached(
            "UPDATE sessions SET last_seq = ?, updated_at = ?, status = ?, active_run_id = ? \
             WHERE id = ?",
        )?
        .execute(params![
            last as i64,
            now_ms,
            status.as_str(),
            run_id,
            advance.id
        ])?;
        appended.listed(session);
    }
    Ok(())
}
