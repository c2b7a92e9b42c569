//! Applying a batch of commands inside one transaction, on the writer's direct
//! connection ([`super::direct`]): guards, seq allocation, derived status and
//! interrupts, then the event rows, appended to the log's tail ([`super::tail`]) with
//! multi-row INSERTs. A batch of plain appends (the token path) takes
//! [`super::appends`], which writes no `sessions` row unless a status changes.
//! Statements come from rusqlite's cache of prepared statements.

use rusqlite::{params, Connection};

use super::appended::Appended;
use super::guards::check_guard;
use super::log::LogState;
use super::raised::{add_spending, insert_interrupts, insert_run_ends};
use crate::store::leases::LeaseTerms;
use crate::store::sql::guards::SET_STATE_SEQ;
use crate::store::{derive_effects, Applied, Batch, Change, Command, Rejection, StoreError};

/// One batch in one transaction as the log's writer ([`LogState::transaction`]); with
/// the outcomes, what to announce once it is committed (the sessions whose listed row
/// changed, those whose queued messages did).
pub(super) fn apply_batch(
    conn: &Connection,
    lease: &LeaseTerms,
    log: &LogState,
    batch: &[Command],
    now_ms: i64,
) -> Result<(Vec<Applied>, Vec<Change>), StoreError> {
    log.transaction(conn, |conn, next_position| {
        let mut appended = Appended::new(&log.tail, next_position);
        let batch = Batch {
            commands: batch,
            lease,
            now_ms,
        };
        let applied = apply_in_transaction(conn, batch, &mut appended)?;
        let announced = appended.announced();
        Ok(((applied, announced), appended.insert(conn)?))
    })
}

/// Checks each guard and applies the commands that pass; rows are inserted at the end,
/// many per statement.
fn apply_in_transaction<'a>(
    conn: &Connection,
    batch: Batch<'a>,
    appended: &mut Appended<'a>,
) -> Result<Vec<Applied>, StoreError> {
    if batch.commands.iter().all(Command::is_plain_append) {
        return super::appends::apply_appends(conn, batch, appended);
    }
    let mut applied = Vec::with_capacity(batch.commands.len());
    for command in batch.commands {
        let session = command.session.to_string();
        if let Some(rejection) =
            check_guard(conn, appended, batch.lease, command, &session, batch.now_ms)?
        {
            applied.push(Applied::Rejected(rejection));
            continue;
        }
        let Some(first_seq) = advance_session(conn, command, &session, batch.now_ms, appended)?
        else {
            applied.push(Applied::Rejected(Rejection::SessionMissing));
            continue;
        };
        if command.guard.changes_queue() {
            appended.queue_changed(command.session);
        }
        applied.push(Applied::Committed { first_seq });
    }
    Ok(applied)
}

/// Hands the command its seqs, writes the session's derived status (and exact
/// `last_seq`) when it changes or a person acted, records raised interrupts and ended
/// runs; returns the first seq, or `None` if the session does not exist.
fn advance_session<'a>(
    conn: &Connection,
    command: &'a Command,
    session: &str,
    now_ms: i64,
    appended: &mut Appended<'a>,
) -> Result<Option<u64>, StoreError> {
    let Some(first_seq) = appended.push(conn, command)? else {
        return Ok(None);
    };
    let last = (first_seq + command.entries.len() as u64 - 1) as i64;
    let effects = derive_effects(&command.entries);
    match &effects.status {
        Some((status, run_id)) => {
            conn.prepare_cached(
                "UPDATE sessions SET last_seq = ?, updated_at = ?, status = ?, \
                 active_run_id = ? WHERE id = ?",
            )?
            .execute(params![last, now_ms, status.as_str(), run_id, session])?;
            appended.listed(command.session);
        }
        None if touches(command) => {
            conn.prepare_cached("UPDATE sessions SET last_seq = ?, updated_at = ? WHERE id = ?")?
                .execute(params![last, now_ms, session])?;
        }
        None => {}
    }
    if let Some(index) = effects.last_state {
        conn.prepare_cached(SET_STATE_SEQ)?
            .execute(params![first_seq as i64 + index as i64, session])?;
    }
    insert_interrupts(conn, session, &effects.interrupts, now_ms)?;
    insert_run_ends(conn, session, first_seq as i64, &effects.run_ends, now_ms)?;
    add_spending(conn, session, effects.spending, now_ms)?;
    Ok(Some(first_seq))
}

/// Whether a command that changes no status still moves the session's `updated_at`
/// ([`crate::store::Guard::moves_activity`]).
fn touches(command: &Command) -> bool {
    command.guard.moves_activity()
}
