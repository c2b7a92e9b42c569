//! Guards on SQLite, inside the log writer's transaction: the same SQL as every backend
//! ([`crate::store::sql::guards`]) run through the writer's direct connection, and the
//! same decision ([`crate::store::guards::decide`]).

use rusqlite::{params, Connection, OptionalExtension};

use crate::store::guards::{decide, Facts, GuardWrite, InterruptFacts, SessionFacts, Verdict};
use crate::store::leases::LeaseTerms;
use crate::store::sql::guards::{
    ANSWER_INTERRUPT, EARLIER_RUN, INTERRUPT_FACTS, LEASE_OWNER, NAME_SESSION,
    RECORD_CLIENT_MESSAGE, SESSION_FACTS, TAKE_LEASE,
};
use crate::store::{Command, Guard, Rejection, StoreError};

/// Returns why the command may not be applied, or records what its guard owns (the
/// de-duplication row, the title, the interrupt's answer) and returns `None`.
pub(super) fn check_guard(
    conn: &Connection,
    lease: &LeaseTerms,
    command: &Command,
    session: &str,
    now_ms: i64,
) -> Result<Option<Rejection>, StoreError> {
    let facts = read_facts(conn, lease, command, session)?;
    match decide(command, &facts) {
        Verdict::Refuse(rejection) => Ok(Some(rejection)),
        Verdict::Proceed(writes) => {
            for write in writes {
                apply_write(conn, lease, session, write, now_ms)?;
            }
            Ok(None)
        }
    }
}

fn read_facts(
    conn: &Connection,
    lease: &LeaseTerms,
    command: &Command,
    session: &str,
) -> Result<Facts, StoreError> {
    let row: Option<(String, Option<String>)> = conn
        .prepare_cached(SESSION_FACTS)?
        .query_row([session], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    let mut facts = Facts {
        session: row.map(|(status, active_run_id)| SessionFacts::from_row(&status, active_run_id)),
        ..Facts::default()
    };
    match &command.guard {
        Guard::StartRun {
            client_message_id: Some(client_id),
            ..
        } => {
            facts.earlier_run = conn
                .prepare_cached(EARLIER_RUN)?
                .query_row(params![session, client_id], |row| row.get(0))
                .optional()?;
        }
        Guard::Resume { interrupt_id, .. } => {
            facts.interrupt = read_interrupt(conn, session, interrupt_id)?;
        }
        Guard::Append => {
            let owner: Option<String> = conn
                .prepare_cached(LEASE_OWNER)?
                .query_row([session], |row| row.get(0))
                .optional()?;
            facts.lease = lease.holder(owner.as_deref());
        }
        _ => {}
    }
    Ok(facts)
}

fn read_interrupt(
    conn: &Connection,
    session: &str,
    interrupt_id: &str,
) -> Result<Option<InterruptFacts>, StoreError> {
    let row: Option<(String, Option<String>, Option<String>)> = conn
        .prepare_cached(INTERRUPT_FACTS)?
        .query_row([interrupt_id, session], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .optional()?;
    row.map(|(state, response, resumed_run_id)| {
        InterruptFacts::from_row(&state, response.as_deref(), resumed_run_id)
    })
    .transpose()
}

fn apply_write(
    conn: &Connection,
    lease: &LeaseTerms,
    session: &str,
    write: GuardWrite,
    now_ms: i64,
) -> Result<(), StoreError> {
    match write {
        GuardWrite::TakeLease { run_id } => {
            conn.prepare_cached(TAKE_LEASE)?.execute(params![
                session,
                run_id,
                lease.owner,
                lease.expires_at(now_ms)
            ])?;
        }
        GuardWrite::RecordClientMessage {
            client_message_id,
            run_id,
        } => {
            conn.prepare_cached(RECORD_CLIENT_MESSAGE)?
                .execute(params![session, client_message_id, run_id])?;
        }
        GuardWrite::NameSession { title } => {
            conn.prepare_cached(NAME_SESSION)?
                .execute(params![title, session])?;
        }
        GuardWrite::AnswerInterrupt {
            interrupt_id,
            state,
            response,
            run_id,
        } => {
            conn.prepare_cached(ANSWER_INTERRUPT)?.execute(params![
                state.as_str(),
                response.to_string(),
                run_id,
                now_ms,
                interrupt_id
            ])?;
        }
    }
    Ok(())
}
