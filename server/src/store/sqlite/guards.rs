//! Guards on SQLite: read what a command's guard needs inside the write transaction
//! (against the state left by the commands before it in the same batch), let
//! [`crate::store::guards::decide`] decide, and make the guard's own writes.

use shared::api::SessionStatus;
use sqlx::SqliteConnection;

use crate::store::guards::{decide, Facts, GuardWrite, InterruptFacts, SessionFacts, Verdict};
use crate::store::{Command, Guard, InterruptState, Rejection, StoreError};

/// Returns why the command may not be applied, or records what its guard owns
/// (the de-duplication row, the title, the interrupt's answer) and returns `None`.
pub(super) async fn check_guard(
    conn: &mut SqliteConnection,
    command: &Command,
    now_ms: i64,
) -> Result<Option<Rejection>, StoreError> {
    let session = command.session.to_string();
    let facts = read_facts(conn, command, &session).await?;
    match decide(command, &facts) {
        Verdict::Refuse(rejection) => Ok(Some(rejection)),
        Verdict::Proceed(writes) => {
            for write in writes {
                apply_write(conn, &session, write, now_ms).await?;
            }
            Ok(None)
        }
    }
}

async fn read_facts(
    conn: &mut SqliteConnection,
    command: &Command,
    session: &str,
) -> Result<Facts, StoreError> {
    let row: Option<(String, Option<String>)> =
        sqlx::query_as("SELECT status, active_run_id FROM sessions WHERE id = ?")
            .bind(session)
            .fetch_optional(&mut *conn)
            .await?;
    let mut facts = Facts {
        session: row.map(|(status, active_run_id)| SessionFacts {
            status: SessionStatus::parse(&status).unwrap_or(SessionStatus::Running),
            active_run_id,
        }),
        ..Facts::default()
    };
    match &command.guard {
        Guard::StartRun {
            client_message_id: Some(client_id),
            ..
        } => {
            let seen: Option<(String,)> = sqlx::query_as(
                "SELECT run_id FROM client_messages WHERE session_id = ? AND client_message_id = ?",
            )
            .bind(session)
            .bind(client_id)
            .fetch_optional(&mut *conn)
            .await?;
            facts.earlier_run = seen.map(|(run_id,)| run_id);
        }
        Guard::Resume { interrupt_id, .. } => {
            facts.interrupt = read_interrupt(conn, session, interrupt_id).await?;
        }
        _ => {}
    }
    Ok(facts)
}

async fn read_interrupt(
    conn: &mut SqliteConnection,
    session: &str,
    interrupt_id: &str,
) -> Result<Option<InterruptFacts>, StoreError> {
    let row: Option<(String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT status, response, resumed_run_id FROM interrupts WHERE id = ? AND session_id = ?",
    )
    .bind(interrupt_id)
    .bind(session)
    .fetch_optional(&mut *conn)
    .await?;
    let Some((state, response, resumed_run_id)) = row else {
        return Ok(None);
    };
    let response = response
        .as_deref()
        .map(serde_json::from_str)
        .transpose()
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(Some(InterruptFacts {
        state: InterruptState::parse(&state),
        response,
        resumed_run_id,
    }))
}

async fn apply_write(
    conn: &mut SqliteConnection,
    session: &str,
    write: GuardWrite,
    now_ms: i64,
) -> Result<(), StoreError> {
    match write {
        GuardWrite::RecordClientMessage {
            client_message_id,
            run_id,
        } => {
            sqlx::query(
                "INSERT INTO client_messages (session_id, client_message_id, run_id) VALUES (?, ?, ?)",
            )
            .bind(session)
            .bind(client_message_id)
            .bind(run_id)
            .execute(&mut *conn)
            .await?;
        }
        GuardWrite::NameSession { title } => {
            sqlx::query(
                "UPDATE sessions SET title = ?, auto_title = 0 WHERE id = ? AND auto_title = 1",
            )
            .bind(title)
            .bind(session)
            .execute(&mut *conn)
            .await?;
        }
        GuardWrite::AnswerInterrupt {
            interrupt_id,
            state,
            response,
            run_id,
        } => {
            sqlx::query(
                "UPDATE interrupts SET status = ?, response = ?, resumed_run_id = ?, resolved_at = ? \
                 WHERE id = ?",
            )
            .bind(state.as_str())
            .bind(response.to_string())
            .bind(run_id)
            .bind(now_ms)
            .bind(interrupt_id)
            .execute(&mut *conn)
            .await?;
        }
    }
    Ok(())
}
