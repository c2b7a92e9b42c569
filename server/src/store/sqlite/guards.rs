//! Guards: the preconditions a command needs, checked inside the write transaction
//! against the state left by the commands before it in the same batch.

use shared::api::SessionStatus;
use sqlx::SqliteConnection;

use crate::store::{Command, Guard, InterruptState, Rejection, StoreError};

/// Returns why the command may not be applied, or records what its guard owns
/// (the de-duplication row, the interrupt's answer) and returns `None`.
pub(super) async fn check_guard(
    conn: &mut SqliteConnection,
    command: &Command,
    now_ms: i64,
) -> Result<Option<Rejection>, StoreError> {
    let session = command.session.to_string();
    match &command.guard {
        Guard::Append => Ok(None),
        Guard::StartRun {
            run_id,
            client_message_id,
            title,
        } => {
            if let Some(client_id) = client_message_id {
                let seen: Option<(String,)> = sqlx::query_as(
                    "SELECT run_id FROM client_messages WHERE session_id = ? AND client_message_id = ?",
                )
                .bind(&session)
                .bind(client_id)
                .fetch_optional(&mut *conn)
                .await?;
                if let Some((run_id,)) = seen {
                    return Ok(Some(Rejection::DuplicateMessage { run_id }));
                }
            }
            let status: Option<(String,)> =
                sqlx::query_as("SELECT status FROM sessions WHERE id = ?")
                    .bind(&session)
                    .fetch_optional(&mut *conn)
                    .await?;
            match status.map(|(s,)| SessionStatus::parse(&s)) {
                None => return Ok(Some(Rejection::SessionMissing)),
                Some(Some(SessionStatus::Idle)) => {}
                Some(other) => {
                    return Ok(Some(Rejection::Busy(
                        other.unwrap_or(SessionStatus::Running),
                    )))
                }
            }
            if let Some(client_id) = client_message_id {
                sqlx::query(
                    "INSERT INTO client_messages (session_id, client_message_id, run_id) VALUES (?, ?, ?)",
                )
                .bind(&session)
                .bind(client_id)
                .bind(run_id)
                .execute(&mut *conn)
                .await?;
            }
            sqlx::query(
                "UPDATE sessions SET title = ?, auto_title = 0 WHERE id = ? AND auto_title = 1",
            )
            .bind(title)
            .bind(&session)
            .execute(&mut *conn)
            .await?;
            Ok(None)
        }
        Guard::InRun { run_id } => {
            let row: Option<(String, Option<String>)> =
                sqlx::query_as("SELECT status, active_run_id FROM sessions WHERE id = ?")
                    .bind(&session)
                    .fetch_optional(&mut *conn)
                    .await?;
            Ok(match row {
                None => Some(Rejection::SessionMissing),
                Some((status, Some(active)))
                    if status == SessionStatus::Running.as_str() && &active == run_id =>
                {
                    None
                }
                Some(_) => Some(Rejection::RunEnded),
            })
        }
        Guard::Resume {
            interrupt_id,
            response,
            run_id,
        } => check_resume(conn, &session, interrupt_id, (response, run_id), now_ms).await,
    }
}

async fn check_resume(
    conn: &mut SqliteConnection,
    session: &str,
    interrupt_id: &str,
    (response, run_id): (&serde_json::Value, &str),
    now_ms: i64,
) -> Result<Option<Rejection>, StoreError> {
    let row: Option<(String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT status, response, resumed_run_id FROM interrupts WHERE id = ? AND session_id = ?",
    )
    .bind(interrupt_id)
    .bind(session)
    .fetch_optional(&mut *conn)
    .await?;
    let Some((state, stored, resumed_run_id)) = row else {
        return Ok(Some(Rejection::InterruptMissing));
    };
    if state != InterruptState::Pending.as_str() {
        let stored: serde_json::Value = stored
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|e| StoreError::Corrupt(e.to_string()))?
            .unwrap_or_default();
        return Ok(Some(Rejection::InterruptAnswered {
            interrupt_id: interrupt_id.to_string(),
            same: &stored == response,
            state,
            response: stored,
            run_id: resumed_run_id,
        }));
    }
    let state = match response.get("status").and_then(|s| s.as_str()) {
        Some("cancelled") => InterruptState::Cancelled,
        Some("expired") => InterruptState::Expired,
        _ => InterruptState::Resolved,
    };
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
    Ok(None)
}
