//! Applying a batch of commands in one transaction: lock the batch's sessions in id
//! order, check guards, allocate seqs and derive status, insert the event rows with one
//! `INSERT … SELECT FROM UNNEST(…)` (arrays bound as three parameters, whatever the batch
//! size), and announce each changed session on [`super::CHANGES_CHANNEL`].

use std::collections::{HashMap, HashSet};

use sqlx::{PgConnection, PgPool};

use super::guards::{check_guard, PgGuardRows};
use super::CHANGES_CHANNEL;
use crate::domain::SessionId;
use crate::store::advances::advances;
use crate::store::leases::LeaseTerms;
use crate::store::sql::guards::SET_STATE_SEQ;
use crate::store::sql::sessions::{HIDE, PURGE_HIDDEN};
use crate::store::{
    derive_effects, Applied, Batch, Change, Command, Effects, Rejection, StoreError,
};

/// The rows a batch inserts, as the column arrays `UNNEST` takes.
#[derive(Default)]
struct EventRows<'a> {
    sessions: Vec<String>,
    seqs: Vec<i64>,
    events: Vec<&'a str>,
}

impl<'a> EventRows<'a> {
    fn push(&mut self, session: &str, first_seq: i64, command: &'a Command) {
        for (offset, entry) in command.entries.iter().enumerate() {
            self.sessions.push(session.to_string());
            self.seqs.push(first_seq + offset as i64);
            self.events.push(entry.json.as_str());
        }
    }
}

/// What a batch writes: its event rows and what it did to each session.
#[derive(Default)]
struct Written<'a> {
    rows: EventRows<'a>,
    touched: Touched,
}

/// What a batch committed to each session it touched, and the sessions whose listed row
/// (status, title) it changed; announced when it commits.
#[derive(Default)]
struct Touched {
    appended: HashMap<SessionId, Change>,
    listed: HashSet<SessionId>,
    /// Sessions whose queued messages changed.
    queues: HashSet<SessionId>,
}

impl Touched {
    fn add(&mut self, command: &Command, first_seq: i64, effects: &Effects) {
        if command.guard.changes_queue() {
            self.queues.insert(command.session);
        }
        if command.entries.is_empty() {
            return;
        }
        if effects.status.is_some() {
            self.listed.insert(command.session);
        }
        let last = first_seq as u64 + command.entries.len() as u64 - 1;
        let change = self
            .appended
            .entry(command.session)
            .or_insert(Change::Appended {
                session: command.session,
                first_seq: first_seq as u64,
                last_seq: last,
                stop_run: None,
            });
        if let Change::Appended {
            last_seq, stop_run, ..
        } = change
        {
            *last_seq = last;
            if effects.stop_run.is_some() {
                stop_run.clone_from(&effects.stop_run);
            }
        }
    }

    /// The notices announcing it ([`Change::encode_many`]).
    fn notices(&self) -> Vec<String> {
        let listed = self
            .listed
            .iter()
            .map(|&session| Change::Listed { session });
        let queues = self
            .queues
            .iter()
            .map(|&session| Change::Queued { session });
        let changes: Vec<Change> = self
            .appended
            .values()
            .cloned()
            .chain(listed)
            .chain(queues)
            .collect();
        Change::encode_many(changes.iter())
    }
}

/// Applies `batch` inside the caller's transaction; one outcome per command.
pub(super) async fn apply_in_transaction(
    conn: &mut PgConnection,
    lease: &LeaseTerms,
    batch: &[Command],
    now_ms: i64,
) -> Result<Vec<Applied>, StoreError> {
    let mut written = Written::default();
    let commands = batch;
    let batch = Batch {
        commands,
        lease,
        now_ms,
    };
    let applied = if commands.iter().all(Command::is_plain_append) {
        // The token path: its one UPDATE locks the sessions itself, in id order.
        apply_appends(conn, batch, &mut written).await?
    } else {
        lock_sessions(conn, commands).await?;
        apply_guarded(conn, batch, &mut written).await?
    };
    let Written { rows, touched } = written;
    let changes = touched.notices();
    // The rows and the announcement in one statement (a data-modifying CTE always runs).
    sqlx::query(
        "WITH inserted AS (INSERT INTO events (session_id, seq, event) \
           SELECT * FROM UNNEST($1::text[], $2::bigint[], $3::text[])) \
         SELECT pg_notify($4, change) FROM UNNEST($5::text[]) AS change",
    )
    .bind(&rows.sessions)
    .bind(&rows.seqs)
    .bind(&rows.events)
    .bind(CHANGES_CHANNEL)
    .bind(&changes)
    .execute(&mut *conn)
    .await?;
    Ok(applied)
}

/// Locks the rows of the batch's sessions, in id order so that writers of several
/// instances never wait for each other in a cycle.
async fn lock_sessions(conn: &mut PgConnection, batch: &[Command]) -> Result<(), StoreError> {
    let mut ids: Vec<String> = batch.iter().map(|c| c.session.to_string()).collect();
    ids.sort_unstable();
    ids.dedup();
    sqlx::query("SELECT id FROM sessions WHERE id = ANY($1) ORDER BY id FOR UPDATE")
        .bind(&ids)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// A batch of plain appends (the token path): one UPDATE locks every session of the
/// batch in id order (the subquery's `FOR UPDATE` after its sort) and advances it.
async fn apply_appends<'a>(
    conn: &mut PgConnection,
    batch: Batch<'a>,
    written: &mut Written<'a>,
) -> Result<Vec<Applied>, StoreError> {
    let effects: Vec<Effects> = batch
        .commands
        .iter()
        .map(|c| derive_effects(&c.entries))
        .collect();
    let advances = advances(batch.commands, &effects);
    let mut ids = Vec::with_capacity(advances.len());
    let mut counts = Vec::with_capacity(advances.len());
    let mut statuses: Vec<Option<&str>> = Vec::with_capacity(advances.len());
    let mut runs: Vec<Option<&str>> = Vec::with_capacity(advances.len());
    for advance in &advances {
        ids.push(advance.id.as_str());
        counts.push(advance.count);
        statuses.push(advance.status.as_ref().map(|(status, _)| status.as_str()));
        runs.push(advance.status.as_ref().and_then(|(_, run)| run.as_deref()));
    }
    let advanced: Vec<(String, i64)> = sqlx::query_as(concat!(
        "UPDATE sessions AS s SET last_seq = ",
        super::head_of!("s.last_seq", "s.id"),
        " + v.n, \
           updated_at = CASE WHEN v.status IS NULL THEN s.updated_at ELSE $5 END, \
           status = coalesce(v.status, s.status), \
           active_run_id = CASE WHEN v.status IS NULL THEN s.active_run_id ELSE v.run END \
         FROM UNNEST($1::text[], $2::bigint[], $3::text[], $4::text[]) AS v(id, n, status, run), \
           (SELECT id FROM sessions WHERE id = ANY($1) ORDER BY id FOR UPDATE) AS locked \
         WHERE s.id = v.id AND s.id = locked.id AND ",
        super::lease_fence!("locked.id", "$6"),
        " RETURNING s.id, s.last_seq"
    ))
    .bind(&ids)
    .bind(&counts)
    .bind(&statuses)
    .bind(&runs)
    .bind(batch.now_ms)
    .bind(&batch.lease.owner)
    .fetch_all(&mut *conn)
    .await?;
    let counts: HashMap<&str, i64> = advances.iter().map(|a| (a.id.as_str(), a.count)).collect();
    let mut next_seq: HashMap<String, i64> = HashMap::with_capacity(advanced.len());
    for (id, last) in advanced {
        let count = counts.get(id.as_str()).copied().unwrap_or(0);
        next_seq.insert(id, last - count + 1);
    }
    let skipped: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| !next_seq.contains_key(*id))
        .collect();
    let skipped = Skipped::read(conn, &skipped).await?;
    let mut applied = Vec::with_capacity(batch.commands.len());
    for (command, effects) in batch.commands.iter().zip(&effects) {
        let session = command.session.to_string();
        let Some(next) = next_seq.get_mut(&session) else {
            applied.push(Applied::Rejected(skipped.rejection(&session)));
            continue;
        };
        let first_seq = *next;
        *next += command.entries.len() as i64;
        written.rows.push(&session, first_seq, command);
        written.touched.add(command, first_seq, effects);
        insert_interrupts(conn, &session, &effects.interrupts, batch.now_ms).await?;
        insert_run_ends(conn, &session, first_seq, &effects.run_ends, batch.now_ms).await?;
        add_spending(conn, &session, effects.spending, batch.now_ms).await?;
        applied.push(Applied::Committed {
            first_seq: first_seq as u64,
        });
    }
    Ok(applied)
}

/// The sessions a batch's advance skipped that still exist: another instance holds their
/// run lease. The others are gone.
pub(super) struct Skipped(HashSet<String>);

impl Skipped {
    /// Reads which of `skipped` exist (no query when none was skipped).
    pub(super) async fn read(
        conn: &mut PgConnection,
        skipped: &[&str],
    ) -> Result<Self, StoreError> {
        if skipped.is_empty() {
            return Ok(Self(HashSet::new()));
        }
        let existing: Vec<String> =
            sqlx::query_scalar("SELECT id FROM sessions WHERE id = ANY($1)")
                .bind(skipped)
                .fetch_all(&mut *conn)
                .await?;
        Ok(Self(existing.into_iter().collect()))
    }

    /// Why a skipped session's command is refused.
    pub(super) fn rejection(&self, session: &str) -> Rejection {
        match self.0.contains(session) {
            true => Rejection::LeaseLost,
            false => Rejection::SessionMissing,
        }
    }
}

/// A batch with guards: each command is checked against the state the commands before
/// it left, then advances its session.
async fn apply_guarded<'a>(
    conn: &mut PgConnection,
    batch: Batch<'a>,
    written: &mut Written<'a>,
) -> Result<Vec<Applied>, StoreError> {
    let mut applied = Vec::with_capacity(batch.commands.len());
    for command in batch.commands {
        let session = command.session.to_string();
        let mut guard_rows = PgGuardRows(&mut *conn);
        let guarded = check_guard(
            &mut guard_rows,
            batch.lease,
            command,
            &session,
            batch.now_ms,
        );
        if let Some(rejection) = guarded.await? {
            applied.push(Applied::Rejected(rejection));
            continue;
        }
        let effects = derive_effects(&command.entries);
        let count = command.entries.len() as i64;
        let (status, run_id) = match &effects.status {
            Some((status, run_id)) => (Some(status.as_str()), run_id.as_deref()),
            None => (None, None),
        };
        let last: Option<(i64,)> = sqlx::query_as(concat!(
            "UPDATE sessions SET last_seq = ",
            super::head_of!("last_seq", "$5"),
            " + $1, \
               updated_at = CASE WHEN $3::text IS NULL AND $6 THEN updated_at ELSE $2 END, \
               status = coalesce($3, status), \
               active_run_id = CASE WHEN $3::text IS NULL THEN active_run_id ELSE $4 END \
             WHERE id = $5 RETURNING last_seq"
        ))
        .bind(count)
        .bind(batch.now_ms)
        .bind(status)
        .bind(run_id)
        .bind(&session)
        .bind(!command.guard.moves_activity())
        .fetch_optional(&mut *conn)
        .await?;
        let Some((last,)) = last else {
            applied.push(Applied::Rejected(Rejection::SessionMissing));
            continue;
        };
        let first_seq = last - count + 1;
        if let Some(index) = effects.last_state {
            sqlx::query(SET_STATE_SEQ)
                .bind(first_seq + index as i64)
                .bind(&session)
                .execute(&mut *conn)
                .await?;
        }
        insert_interrupts(conn, &session, &effects.interrupts, batch.now_ms).await?;
        insert_run_ends(conn, &session, first_seq, &effects.run_ends, batch.now_ms).await?;
        add_spending(conn, &session, effects.spending, batch.now_ms).await?;
        written.rows.push(&session, first_seq, command);
        written.touched.add(command, first_seq, &effects);
        applied.push(Applied::Committed {
            first_seq: first_seq as u64,
        });
    }
    Ok(applied)
}

/// Announces changes ([`Change::encode`]) to every instance; inside a transaction,
/// PostgreSQL delivers them only once it commits.
async fn notify(conn: &mut PgConnection, changes: &[String]) -> Result<(), StoreError> {
    if changes.is_empty() {
        return Ok(());
    }
    sqlx::query("SELECT pg_notify($1, change) FROM UNNEST($2::text[]) AS change")
        .bind(CHANGES_CHANNEL)
        .bind(changes)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Deletes a session (with everything of its own) and announces it; false if there was
/// none. One that branches read from is hidden instead, until its last branch goes.
pub(super) async fn delete_session(pool: &PgPool, id: SessionId) -> Result<bool, StoreError> {
    let mut tx = pool.begin().await?;
    let hidden = sqlx::query(HIDE)
        .bind(id.to_string())
        .execute(&mut *tx)
        .await?;
    if hidden.rows_affected() == 0 {
        return Ok(false);
    }
    finish_delete(tx, vec![(id.to_string(),)]).await?;
    Ok(true)
}

/// Deletes up to `limit` idle sessions last updated before `cutoff_ms`. Rows another
/// transaction holds (a session some instance is writing to right now) are skipped, so
/// the sweepers of several instances never wait for each other or delete twice.
pub(super) async fn delete_idle_before(
    pool: &PgPool,
    cutoff_ms: i64,
    limit: u32,
) -> Result<Vec<SessionId>, StoreError> {
    let mut tx = pool.begin().await?;
    let deleted: Vec<(String,)> = sqlx::query_as(
        "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions s \
           WHERE status = 'idle' AND updated_at < $1 \
             AND NOT EXISTS (SELECT 1 FROM sessions b WHERE b.parent_id = s.id) \
           ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED) \
         RETURNING id",
    )
    .bind(cutoff_ms)
    .bind(i64::from(limit))
    .fetch_all(&mut *tx)
    .await?;
    finish_delete(tx, deleted).await
}

/// Purges the hidden sessions no branch reads from any more (a branch that went may have
/// been the last one reading its parent's rows), announces the deleted ones, commits.
async fn finish_delete(
    mut tx: sqlx::Transaction<'_, sqlx::Postgres>,
    deleted: Vec<(String,)>,
) -> Result<Vec<SessionId>, StoreError> {
    while !sqlx::query(PURGE_HIDDEN)
        .fetch_all(&mut *tx)
        .await?
        .is_empty()
    {}
    let deleted = deleted
        .into_iter()
        .map(crate::store::rows::session_id_of)
        .collect::<Result<Vec<_>, _>>()?;
    let changes = Change::encode_many(
        deleted
            .iter()
            .map(|&session| Change::Deleted { session })
            .collect::<Vec<_>>()
            .iter(),
    );
    notify(&mut tx, &changes).await?;
    tx.commit().await?;
    Ok(deleted)
}

crate::store::sql::interrupts::interrupts_on!(PgConnection);
