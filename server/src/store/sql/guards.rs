//! Guards in SQL both backends run: read what a command's guard needs inside the write
//! transaction (the facts the commands before it in the same batch left), let
//! [`crate::store::guards::decide`] decide, and make the guard's own writes. The SQL
//! is shared as constants with the SQLite writer's direct port (`sqlite::guards`).

/// A session's status and active run.
pub(crate) const SESSION_FACTS: &str = "SELECT status, active_run_id FROM sessions WHERE id = $1";
/// The run a client message id already started.
pub(crate) const EARLIER_RUN: &str =
    "SELECT run_id FROM client_messages WHERE session_id = $1 AND client_message_id = $2";
/// Who holds a session's run lease.
pub(crate) const LEASE_OWNER: &str = "SELECT owner FROM run_leases WHERE session_id = $1";
/// An interrupt's state and answer.
pub(crate) const INTERRUPT_FACTS: &str =
    "SELECT status, response, resumed_run_id FROM interrupts WHERE id = $1 AND session_id = $2";
/// Takes (or retakes, with a new epoch) a session's run lease: session, run, owner, expiry.
pub(crate) const TAKE_LEASE: &str =
    "INSERT INTO run_leases (session_id, run_id, owner, epoch, expires_at) \
     VALUES ($1, $2, $3, 1, $4) \
     ON CONFLICT (session_id) DO UPDATE SET run_id = excluded.run_id, \
       owner = excluded.owner, epoch = run_leases.epoch + 1, expires_at = excluded.expires_at";
/// Records which run a client message id started.
pub(crate) const RECORD_CLIENT_MESSAGE: &str =
    "INSERT INTO client_messages (session_id, client_message_id, run_id) VALUES ($1, $2, $3)";
/// Names a session that still has its default title.
pub(crate) const NAME_SESSION: &str =
    "UPDATE sessions SET title = $1, auto_title = FALSE WHERE id = $2 AND auto_title";
/// Records an interrupt's answer: state, response, resumed run, time, interrupt.
pub(crate) const ANSWER_INTERRUPT: &str =
    "UPDATE interrupts SET status = $1, response = $2, resumed_run_id = $3, resolved_at = $4 \
     WHERE id = $5";

/// Defines this module's functions for a backend that runs them through sqlx (`$conn`:
/// its connection type; PostgreSQL's today, SQLite's writer runs the same constants
/// through rusqlite). The SQL is the same on SQLite and PostgreSQL (`$1` placeholders,
/// `TRUE` and `FALSE`, `ON CONFLICT`, `RETURNING`); a macro rather than functions
/// generic over sqlx's `Database`, whose executor, encode and decode bounds would spread
/// to every caller.
macro_rules! guards_on {
    ($conn:ty) => {
        use crate::store::guards::{
            decide, Facts, GuardWrite, InterruptFacts, SessionFacts, Verdict,
        };
        use crate::store::leases::LeaseTerms;
        use crate::store::{Command, Guard, Rejection, StoreError};

        /// Returns why the command may not be applied, or records what its guard owns
        /// (the de-duplication row, the title, the interrupt's answer) and returns `None`.
        pub(super) async fn check_guard(
            conn: &mut $conn,
            lease: &LeaseTerms,
            command: &Command,
            now_ms: i64,
        ) -> Result<Option<Rejection>, StoreError> {
            let session = command.session.to_string();
            let facts = read_facts(conn, lease, command, &session).await?;
            match decide(command, &facts) {
                Verdict::Refuse(rejection) => Ok(Some(rejection)),
                Verdict::Proceed(writes) => {
                    for write in writes {
                        apply_write(conn, lease, &session, write, now_ms).await?;
                    }
                    Ok(None)
                }
            }
        }

        async fn read_facts(
            conn: &mut $conn,
            lease: &LeaseTerms,
            command: &Command,
            session: &str,
        ) -> Result<Facts, StoreError> {
            let row: Option<(String, Option<String>)> =
                sqlx::query_as(crate::store::sql::guards::SESSION_FACTS)
                    .bind(session)
                    .fetch_optional(&mut *conn)
                    .await?;
            let mut facts = Facts {
                session: row
                    .map(|(status, active_run_id)| SessionFacts::from_row(&status, active_run_id)),
                ..Facts::default()
            };
            match &command.guard {
                Guard::StartRun {
                    client_message_id: Some(client_id),
                    ..
                } => {
                    let seen: Option<(String,)> =
                        sqlx::query_as(crate::store::sql::guards::EARLIER_RUN)
                            .bind(session)
                            .bind(client_id)
                            .fetch_optional(&mut *conn)
                            .await?;
                    facts.earlier_run = seen.map(|(run_id,)| run_id);
                }
                Guard::Resume { interrupt_id, .. } => {
                    facts.interrupt = read_interrupt(conn, session, interrupt_id).await?;
                }
                Guard::Append => {
                    let owner: Option<(String,)> =
                        sqlx::query_as(crate::store::sql::guards::LEASE_OWNER)
                            .bind(session)
                            .fetch_optional(&mut *conn)
                            .await?;
                    facts.lease = lease.holder(owner.as_ref().map(|(owner,)| owner.as_str()));
                }
                _ => {}
            }
            Ok(facts)
        }

        async fn read_interrupt(
            conn: &mut $conn,
            session: &str,
            interrupt_id: &str,
        ) -> Result<Option<InterruptFacts>, StoreError> {
            let row: Option<(String, Option<String>, Option<String>)> =
                sqlx::query_as(crate::store::sql::guards::INTERRUPT_FACTS)
                    .bind(interrupt_id)
                    .bind(session)
                    .fetch_optional(&mut *conn)
                    .await?;
            row.map(|(state, response, resumed_run_id)| {
                InterruptFacts::from_row(&state, response.as_deref(), resumed_run_id)
            })
            .transpose()
        }

        async fn apply_write(
            conn: &mut $conn,
            lease: &LeaseTerms,
            session: &str,
            write: GuardWrite,
            now_ms: i64,
        ) -> Result<(), StoreError> {
            match write {
                GuardWrite::TakeLease { run_id } => {
                    sqlx::query(crate::store::sql::guards::TAKE_LEASE)
                        .bind(session)
                        .bind(run_id)
                        .bind(&lease.owner)
                        .bind(lease.expires_at(now_ms))
                        .execute(&mut *conn)
                        .await?;
                }
                GuardWrite::RecordClientMessage {
                    client_message_id,
                    run_id,
                } => {
                    sqlx::query(crate::store::sql::guards::RECORD_CLIENT_MESSAGE)
                        .bind(session)
                        .bind(client_message_id)
                        .bind(run_id)
                        .execute(&mut *conn)
                        .await?;
                }
                GuardWrite::NameSession { title } => {
                    sqlx::query(crate::store::sql::guards::NAME_SESSION)
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
                    sqlx::query(crate::store::sql::guards::ANSWER_INTERRUPT)
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
    };
}

pub(crate) use guards_on;
