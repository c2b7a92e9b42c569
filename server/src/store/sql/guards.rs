//! Guards, defined once for every backend: which rows a command's guard reads inside
//! the write transaction (the facts the commands before it in the same batch left), the
//! decision ([`crate::store::guards::decide`]), and the guard's own writes, each as one
//! SQL statement below. A backend only runs statements: it implements [`GuardRows`] for
//! its connection (PostgreSQL through sqlx, SQLite's writer through rusqlite), and
//! [`check_guard`] does the rest.

use crate::store::guards::{decide, Facts, GuardWrite, InterruptFacts, SessionFacts, Verdict};
use crate::store::leases::LeaseTerms;
use crate::store::{Command, Guard, Rejection, StateRead, StoreError};

/// A session's status and active run.
pub(crate) const SESSION_FACTS: &str =
    "SELECT status, active_run_id FROM sessions WHERE id = $1 AND NOT deleted";
/// The run a client message id already started.
pub(crate) const EARLIER_RUN: &str =
    "SELECT run_id FROM client_messages WHERE session_id = $1 AND client_message_id = $2";
/// The seq of a session's last state event in its own rows (-1: none) and its fork seq
/// (0: none), as `own:fork` (see `state_unmoved`).
pub(crate) const STATE_FACTS: &str = "SELECT CAST(coalesce(state_seq, -1) AS TEXT) || ':' || \
     CAST(coalesce(fork_seq, 0) AS TEXT) FROM sessions WHERE id = $1 AND NOT deleted";
/// Records a user's rating of a run, or changes it: session, run, user, rating, comment,
/// time.
pub(crate) const RECORD_FEEDBACK: &str = "INSERT INTO feedback \
     (session_id, run_id, user_id, rating, comment, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $6) \
     ON CONFLICT (session_id, run_id, user_id) DO UPDATE SET rating = excluded.rating, \
       comment = excluded.comment, updated_at = excluded.updated_at";
/// The webhook a rating owes, as a run end of outcome `feedback` whose `error` column
/// holds the rating: id, session, run, the rating as JSON, time.
pub(crate) const OWE_FEEDBACK_WEBHOOK: &str = "INSERT INTO run_ends \
     (id, session_id, run_id, outcome, error, created_at) \
     VALUES ($1, $2, $3, 'feedback', $4, $5) ON CONFLICT (id) DO NOTHING";
/// Records the seq of the session's last state event: seq, session.
pub(crate) const SET_STATE_SEQ: &str = "UPDATE sessions SET state_seq = $1 WHERE id = $2";
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
/// Records an interrupt's answer: state, response, resumed run, time, interrupt, session.
pub(crate) const ANSWER_INTERRUPT: &str =
    "UPDATE interrupts SET status = $1, response = $2, resumed_run_id = $3, resolved_at = $4 \
     WHERE id = $5 AND session_id = $6";

/// Whether a schedule's time has a fire (as text, like every guard read): schedule, time.
pub(crate) const FIRE_TAKEN: &str =
    "SELECT status FROM schedule_fires WHERE schedule_id = $1 AND scheduled_for = $2";
/// Records a schedule's fire that starts (or queues the message of) a run: schedule,
/// time, time fired, session, run, manual (0 or 1). (SQLite numbers `$N` placeholders in
/// the order they first appear: every statement here names them in order.)
pub(crate) const RECORD_FIRE: &str = "INSERT INTO schedule_fires \
     (schedule_id, scheduled_for, status, fired_at, session_id, run_id, manual) \
     VALUES ($1, $2, 'fired', $3, $4, $5, $6 = 1)";

/// The first queued message of a session.
pub(crate) const QUEUE_HEAD: &str =
    "SELECT id FROM queued_messages WHERE session_id = $1 ORDER BY position LIMIT 1";
/// How many messages a session holds queued (as text, like every guard read).
pub(crate) const QUEUE_LEN: &str =
    "SELECT CAST(count(*) AS TEXT) FROM queued_messages WHERE session_id = $1";
/// A queued message, if it is still queued.
pub(crate) const QUEUED_ID: &str =
    "SELECT id FROM queued_messages WHERE session_id = $1 AND id = $2";
/// The run a queued message of a client message id will start.
pub(crate) const QUEUED_RUN: &str =
    "SELECT run_id FROM queued_messages WHERE session_id = $1 AND client_message_id = $2";
/// Queues a message after the others: session, id, run, kind, client message id, text,
/// extra, time.
pub(crate) const QUEUE_LAST: &str = "INSERT INTO queued_messages \
     (session_id, id, position, run_id, kind, client_message_id, text, extra, created_at) \
     SELECT $1, $2, coalesce(max(position), 0) + 1, $3, $4, $5, $6, $7, $8 \
     FROM queued_messages WHERE session_id = $1";
/// Queues a message before the others (the same parameters as [`QUEUE_LAST`]).
pub(crate) const QUEUE_FIRST: &str = "INSERT INTO queued_messages \
     (session_id, id, position, run_id, kind, client_message_id, text, extra, created_at) \
     SELECT $1, $2, coalesce(min(position), 1) - 1, $3, $4, $5, $6, $7, $8 \
     FROM queued_messages WHERE session_id = $1";
/// Takes a message off the queue: session, id.
pub(crate) const UNQUEUE: &str = "DELETE FROM queued_messages WHERE session_id = $1 AND id = $2";
/// Changes a queued message's text: text, session, id.
pub(crate) const EDIT_QUEUED: &str =
    "UPDATE queued_messages SET text = $1 WHERE session_id = $2 AND id = $3";

/// A value bound to a guard statement's placeholder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Param<'a> {
    Text(&'a str),
    MaybeText(Option<&'a str>),
    Int(i64),
}

/// Runs the guard statements on one backend's connection, inside its write transaction.
/// Each read returns the row of its statement, if there is one.
pub(crate) trait GuardRows {
    /// [`SESSION_FACTS`] of `session`: its status and active run.
    async fn session_row(
        &mut self,
        session: &str,
    ) -> Result<Option<(String, Option<String>)>, StoreError>;
    /// One text column of a statement's first row (`EARLIER_RUN`, `LEASE_OWNER`).
    async fn text_row(
        &mut self,
        sql: &'static str,
        params: &[Param<'_>],
    ) -> Result<Option<String>, StoreError>;
    /// [`INTERRUPT_FACTS`]: state, answer and resumed run.
    async fn interrupt_row(
        &mut self,
        interrupt_id: &str,
        session: &str,
    ) -> Result<Option<(String, Option<String>, Option<String>)>, StoreError>;
    /// The seq `session`'s line ends at, with the commands before this one in the
    /// batch (0 for a session without events or that does not exist).
    async fn head(&mut self, session: &str) -> Result<u64, StoreError>;
    /// Runs one of the guard's writes.
    async fn execute(&mut self, sql: &'static str, params: &[Param<'_>]) -> Result<(), StoreError>;
}

/// Returns why `command` may not be applied, or records what its guard owns (the
/// de-duplication row, the title, the interrupt's answer) and returns `None`.
pub(crate) async fn check_guard<R: GuardRows>(
    rows: &mut R,
    lease: &LeaseTerms,
    command: &Command,
    session: &str,
    now_ms: i64,
) -> Result<Option<Rejection>, StoreError> {
    if let Some(read) = command.state {
        let row = rows.text_row(STATE_FACTS, &[Param::Text(session)]).await?;
        if row.is_some_and(|row| !state_unmoved(&row, read)) {
            return Ok(Some(Rejection::StateMoved));
        }
    }
    let facts = read_facts(rows, lease, command, session).await?;
    match decide(command, &facts) {
        Verdict::Refuse(rejection) => Ok(Some(rejection)),
        Verdict::Proceed(writes) => {
            for write in writes {
                apply_write(rows, lease, session, write, now_ms).await?;
            }
            Ok(None)
        }
    }
}

/// What the guard of `command` decides on.
async fn read_facts<R: GuardRows>(
    rows: &mut R,
    lease: &LeaseTerms,
    command: &Command,
    session: &str,
) -> Result<Facts, StoreError> {
    let row = rows.session_row(session).await?;
    let mut facts = Facts {
        session: row.map(|(status, active_run_id)| SessionFacts::from_row(&status, active_run_id)),
        ..Facts::default()
    };
    match &command.guard {
        Guard::StartRun {
            client_message_id,
            fire,
            ..
        } => {
            if let Some(client_id) = client_message_id {
                facts.earlier_run = rows.text_row(EARLIER_RUN, &of(session, client_id)).await?;
            }
            facts.queue_head = rows.text_row(QUEUE_HEAD, &[Param::Text(session)]).await?;
            facts.fire_taken = fire_taken(rows, fire.as_deref()).await?;
        }
        Guard::Queue { message, fire, .. } => {
            facts.fire_taken = fire_taken(rows, fire.as_deref()).await?;
            if let Some(client_id) = message.client_message_id.as_deref() {
                facts.earlier_run =
                    match rows.text_row(EARLIER_RUN, &of(session, client_id)).await? {
                        Some(run) => Some(run),
                        None => rows.text_row(QUEUED_RUN, &of(session, client_id)).await?,
                    };
            }
            facts.queue_head = rows.text_row(QUEUE_HEAD, &[Param::Text(session)]).await?;
            let len = rows.text_row(QUEUE_LEN, &[Param::Text(session)]).await?;
            facts.queue_len = len.and_then(|n| n.parse().ok()).unwrap_or(0);
        }
        Guard::ChangeQueued { id, .. } => {
            facts.queued = rows
                .text_row(QUEUED_ID, &of(session, id))
                .await?
                .into_iter()
                .collect();
            if facts.queued.is_empty() {
                facts.earlier_run = rows.text_row(EARLIER_RUN, &of(session, id)).await?;
            }
        }
        Guard::TakeSteering { ids, .. } => {
            let owner = rows.text_row(LEASE_OWNER, &[Param::Text(session)]).await?;
            facts.lease = lease.holder(owner.as_deref());
            for id in ids {
                facts
                    .queued
                    .extend(rows.text_row(QUEUED_ID, &of(session, id)).await?);
            }
        }
        Guard::Resume { interrupt_id, .. } => {
            let row = rows.interrupt_row(interrupt_id, session).await?;
            facts.interrupt = row
                .map(|(state, response, resumed_run_id)| {
                    InterruptFacts::from_row(&state, response.as_deref(), resumed_run_id)
                })
                .transpose()?;
        }
        Guard::Annotate { run_id: None, .. } => {
            facts.queue_head = rows.text_row(QUEUE_HEAD, &[Param::Text(session)]).await?;
        }
        Guard::Append => {
            let owner = rows.text_row(LEASE_OWNER, &[Param::Text(session)]).await?;
            facts.lease = lease.holder(owner.as_deref());
        }
        Guard::Repair { .. } => {
            let owner = rows.text_row(LEASE_OWNER, &[Param::Text(session)]).await?;
            facts.lease = lease.holder(owner.as_deref());
            facts.head = rows.head(session).await?;
        }
        _ => {}
    }
    Ok(facts)
}

/// Whether the schedule's time a command fires already has a fire.
async fn fire_taken<R: GuardRows>(
    rows: &mut R,
    fire: Option<&crate::store::FireClaim>,
) -> Result<bool, StoreError> {
    let Some(claim) = fire else {
        return Ok(false);
    };
    let params = [
        Param::Text(&claim.schedule_id),
        Param::Int(claim.scheduled_for),
    ];
    Ok(rows.text_row(FIRE_TAKEN, &params).await?.is_some())
}

/// Whether the state a change was made from is still the session's, given its
/// [`STATE_FACTS`] row (`<own last state seq, -1 for none>:<fork seq, 0 for none>`): no
/// state event since in its own rows, and one read from the prefix a branch shares is
/// still the latest when the branch has none of its own (the prefix never changes).
fn state_unmoved(row: &str, read: StateRead) -> bool {
    let mut parts = row.split(':').map(|part| part.parse::<i64>().unwrap_or(-1));
    let (own, fork) = (parts.next().unwrap_or(-1), parts.next().unwrap_or(0));
    match (own, read.last_seq) {
        (-1, None) => true,
        (-1, Some(read)) => read as i64 <= fork,
        (own, Some(read)) => own == read as i64,
        (_, None) => false,
    }
}

/// The parameters of a read by session and one id.
fn of<'a>(session: &'a str, id: &'a str) -> [Param<'a>; 2] {
    [Param::Text(session), Param::Text(id)]
}

/// Makes one of the guard's own writes.
async fn apply_write<R: GuardRows>(
    rows: &mut R,
    lease: &LeaseTerms,
    session: &str,
    write: GuardWrite,
    now_ms: i64,
) -> Result<(), StoreError> {
    match write {
        GuardWrite::TakeLease { run_id } => {
            let params = [
                Param::Text(session),
                Param::Text(&run_id),
                Param::Text(&lease.owner),
                Param::Int(lease.expires_at(now_ms)),
            ];
            rows.execute(TAKE_LEASE, &params).await
        }
        GuardWrite::RecordClientMessage {
            client_message_id,
            run_id,
        } => {
            let params = [
                Param::Text(session),
                Param::Text(&client_message_id),
                Param::Text(&run_id),
            ];
            rows.execute(RECORD_CLIENT_MESSAGE, &params).await
        }
        GuardWrite::NameSession { title } => {
            let params = [Param::Text(&title), Param::Text(session)];
            rows.execute(NAME_SESSION, &params).await
        }
        GuardWrite::AnswerInterrupt {
            interrupt_id,
            state,
            response,
            run_id,
        } => {
            let response = response.to_string();
            let params = [
                Param::Text(state.as_str()),
                Param::Text(&response),
                Param::Text(&run_id),
                Param::Int(now_ms),
                Param::Text(&interrupt_id),
                Param::Text(session),
            ];
            rows.execute(ANSWER_INTERRUPT, &params).await
        }
        GuardWrite::InsertQueued { message, first } => {
            let extra = message.extra_json();
            let params = [
                Param::Text(session),
                Param::Text(&message.id),
                Param::Text(&message.run_id),
                Param::Text(message.kind()),
                Param::MaybeText(message.client_message_id.as_deref()),
                Param::Text(&message.text),
                Param::Text(&extra),
                Param::Int(now_ms),
            ];
            let sql = if first { QUEUE_FIRST } else { QUEUE_LAST };
            rows.execute(sql, &params).await
        }
        GuardWrite::DeleteQueued { id } => {
            rows.execute(UNQUEUE, &[Param::Text(session), Param::Text(&id)])
                .await
        }
        GuardWrite::EditQueued { id, text } => {
            let params = [Param::Text(&text), Param::Text(session), Param::Text(&id)];
            rows.execute(EDIT_QUEUED, &params).await
        }
        GuardWrite::RecordFire { claim, run_id } => {
            let params = [
                Param::Text(&claim.schedule_id),
                Param::Int(claim.scheduled_for),
                Param::Int(claim.fired_at),
                Param::Text(session),
                Param::Text(&run_id),
                Param::Int(i64::from(claim.manual)),
            ];
            rows.execute(RECORD_FIRE, &params).await
        }
        GuardWrite::RecordFeedback(row) => {
            let user = row.user.to_string();
            let params = [
                Param::Text(session),
                Param::Text(&row.run_id),
                Param::Text(&user),
                Param::Text(row.rating.as_str()),
                Param::MaybeText(row.comment.as_deref()),
                Param::Int(row.at_ms),
            ];
            rows.execute(RECORD_FEEDBACK, &params).await?;
            // The webhook it owes, as a run end of outcome `feedback` (see
            // `store/sql/webhook_sources.rs`), one per rating given.
            let id = format!("{session}:feedback:{}:{user}:{}", row.run_id, row.at_ms);
            let note = serde_json::json!({"rating": row.rating.as_str(), "comment": row.comment,
                                          "user": row.user_name})
            .to_string();
            let params = [
                Param::Text(&id),
                Param::Text(session),
                Param::Text(&row.run_id),
                Param::Text(&note),
                Param::Int(row.at_ms),
            ];
            rows.execute(OWE_FEEDBACK_WEBHOOK, &params).await
        }
    }
}
