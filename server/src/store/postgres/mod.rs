//! The team backend: one PostgreSQL database that any number of Tandem instances share.
//!
//! Writes come only through [`EventLog::apply`] (each instance's log writers, each on its
//! own connection) and run in one transaction that first locks the batch's session rows
//! in id order (`FOR UPDATE`), so writers of several instances serialise per session
//! without deadlocking each other, and guards read facts no other transaction can change
//! before the commit. The token path ([`tokens`]) is one statement, and once the writer
//! knows a session's head ([`heads`]) a bare insert after it: the events' primary key is
//! then the arbiter, and a head another writer moved on collides and is read again. Every
//! batch that changes a session also issues `NOTIFY tandem_log` inside its transaction,
//! which PostgreSQL delivers only after the commit.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use shared::api::SessionStatus;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use tokio::sync::mpsc::UnboundedReceiver;

mod apply;
mod branches;
mod feed;
mod flush;
mod guards;
mod heads;
mod leases;
mod purged;
mod reads;
mod records;
pub mod scratch;
mod sessions;
#[cfg(test)]
pub(crate) mod test_support;
mod tokens;
#[cfg(test)]
mod tokens_tests;
mod writer_connection;

pub use feed::LISTENER_NAME;

/// Makes a transaction the only one of a user (`$1`) until it ends, on every instance:
/// it locks the user's row, which the next such transaction of theirs waits for.
pub(crate) const HOLD_USER: &str = "SELECT id FROM users WHERE id = $1 FOR UPDATE";

use super::leases::LeaseTerms;
use super::rows::{session_from, SessionTuple, SESSION_COLUMNS};
use super::StoreOptions;
use super::{
    Applied, Change, Command, ErrorKind, EventLog, FramePage, NewBranch, SessionRow, StoreError,
    StoredEvent, DEFAULT_TITLE,
};
use crate::domain::{SessionId, UserId};

/// A session's head in SQL: its `last_seq` column (`$last_seq`), or the last seq in the
/// log's key for its id (`$id`) where bare token inserts ([`tokens`]) went further.
macro_rules! head_of {
    ($last_seq:literal, $id:literal) => {
        concat!(
            "greatest(",
            $last_seq,
            ", coalesce((SELECT max(seq) FROM events WHERE session_id = ",
            $id,
            "), 0))"
        )
    };
}
pub(super) use head_of;

/// The lease fence of a statement that locks its sessions' rows (`$id`: the session as
/// the locking subquery returns it, so the fence runs only once its row is locked;
/// `$owner`: this instance): true unless another instance holds the session's run lease.
/// The lease row is read `FOR SHARE`, so PostgreSQL reads its newest version even when the
/// statement's snapshot predates a takeover that committed while it waited for the
/// session's row lock (a plain subquery would still see the old holder there); `NOWAIT`,
/// so it never waits on a renewal that holds the row (a lock the writer retries) and
/// never holds a lease row while it waits for a session's.
macro_rules! lease_fence {
    ($id:literal, $owner:literal) => {
        concat!(
            "coalesce((SELECT l.owner FROM run_leases l WHERE l.session_id = ",
            $id,
            " FOR SHARE NOWAIT), ",
            $owner,
            ") = ",
            $owner
        )
    };
}
pub(super) use lease_fence;

/// The events' primary key, `(session_id, seq)`: the arbiter between writers that append
/// to one session at once.
const EVENTS_KEY: &str = "events_pkey";

/// How many times a batch is committed again at once when a seq it was given turns out
/// taken ([`StoreError::SeqTaken`]) before the writer's own retries, with their waits,
/// take over. Each attempt after the first reads the heads afresh, so a second collision
/// needs yet another writer in between.
const SEQ_ATTEMPTS: usize = 3;

/// The channel every committed change of a session is announced on.
pub const CHANGES_CHANNEL: &str = "tandem_log";

/// How PostgreSQL's SQLSTATE codes read for the writer: lost or refused connections,
/// deadlocks, serialisation failures and lock timeouts may clear; a full disk clears once
/// space is freed; an event row whose key another writer took is a seq taken ([`heads`]);
/// anything else is fatal. `None` for an error of another backend.
pub(super) fn classify(error: &(dyn sqlx::error::DatabaseError + 'static)) -> Option<ErrorKind> {
    let error = error.try_downcast_ref::<sqlx::postgres::PgDatabaseError>()?;
    let code = error.code();
    Some(match code {
        "53100" => ErrorKind::Full,
        "23505" if error.constraint() == Some(EVENTS_KEY) => ErrorKind::SeqTaken,
        "40001" | "40P01" | "55P03" | "53300" | "57P01" | "57P02" | "57P03" => {
            ErrorKind::Unavailable
        }
        _ if code.starts_with("08") => ErrorKind::Unavailable,
        _ => ErrorKind::Fatal,
    })
}

/// A [`Store`](crate::store::Store) on a PostgreSQL database.
#[derive(Clone)]
pub struct PostgresStore {
    pool: PgPool,
    options: PgConnectOptions,
    lease: LeaseTerms,
    /// The log writers' own connections ([`EventLog::apply`]).
    writer: Arc<writer_connection::WriterConnection>,
    /// How many log writers commit at once.
    writers: usize,
    /// The heads of the sessions the log writers appended to ([`heads`]).
    heads: Arc<heads::Heads>,
    /// Sweeps what bare appends left after their session was purged ([`purged`]).
    purged: Arc<purged::Sweeper>,
}

impl PostgresStore {
    /// Connects to the database at `url` and migrates it. A statement waits at most the
    /// lock timeout for a lock another transaction holds (then the database counts as
    /// unavailable and the writer retries), and as long for a free connection. A
    /// transaction left idle for a run lease's length (its instance froze mid-commit) is
    /// ended by the server, so it cannot hold a session's row against the instance that
    /// takes the run over. Warns if the database's commits do not wait for the WAL's
    /// flush (`store/postgres/flush.rs`).
    pub async fn connect(url: &str, store_options: &StoreOptions) -> Result<Self, StoreError> {
        let lock_timeout = store_options.lock_timeout;
        let lock_ms = lock_timeout.as_millis().max(1).to_string();
        let idle_ms = store_options.run_lease.as_millis().max(1).to_string();
        let options = PgConnectOptions::from_str(url)?
            .application_name("tandem")
            .options([
                ("lock_timeout", lock_ms.as_str()),
                ("idle_in_transaction_session_timeout", idle_ms.as_str()),
            ]);
        let acquire_timeout = lock_timeout.max(Duration::from_secs(1));
        let pool = PgPoolOptions::new()
            .max_connections(10)
            .acquire_timeout(acquire_timeout)
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("../migrations/postgres").run(&pool).await?;
        flush::warn_unless_flushed(&pool).await?;
        let lease = LeaseTerms::new(
            store_options.run_lease,
            store_options.instance_name.as_deref(),
        );
        let writer_options = options
            .clone()
            .options([("plan_cache_mode", "force_generic_plan")]);
        let writers = store_options.log_writers.max(1);
        let writer =
            writer_connection::WriterConnection::new(writer_options, acquire_timeout, writers);
        Ok(Self {
            pool,
            options,
            lease,
            writer: Arc::new(writer),
            writers,
            heads: Arc::default(),
            purged: Arc::new(purged::Sweeper::new(lock_timeout)),
        })
    }

    /// The pool, for tests and tools that inspect the database.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

/// A stored id that does not parse.
fn corrupt(error: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(error.to_string())
}

impl EventLog for PostgresStore {
    async fn create_session(
        &self,
        owner: UserId,
        id: SessionId,
        title: Option<&str>,
        now_ms: i64,
    ) -> Result<SessionRow, StoreError> {
        let auto_title = title.is_none();
        let title = title.unwrap_or(DEFAULT_TITLE);
        // The row and its announcement in one statement (a data-modifying CTE always runs).
        sqlx::query(
            "WITH created AS (INSERT INTO sessions \
               (id, owner_id, title, auto_title, created_at, updated_at) \
               VALUES ($1, $2, $3, $4, $5, $5)) \
             SELECT pg_notify($6, $7)",
        )
        .bind(id.to_string())
        .bind(owner.to_string())
        .bind(title)
        .bind(auto_title)
        .bind(now_ms)
        .bind(CHANGES_CHANNEL)
        .bind(Change::Listed { session: id }.encode())
        .execute(&self.pool)
        .await?;
        Ok(SessionRow::created(id, owner, title, now_ms))
    }

    async fn fork_session(&self, branch: NewBranch<'_>) -> Result<Option<SessionRow>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let Some(from) = branches::branch_point(&mut tx, branch.fork).await? else {
            return Ok(None);
        };
        let sql = format!(
            "INSERT INTO sessions (id, owner_id, title, auto_title, last_seq, created_at, \
               updated_at, parent_id, fork_seq, root_id) \
             SELECT $1, owner_id, coalesce($2, title), auto_title AND $2::text IS NULL, $3, $4, \
               $4, id, $3, coalesce(root_id, id) FROM sessions WHERE id = $5 \
             RETURNING {SESSION_COLUMNS}"
        );
        let mut row: SessionTuple = sqlx::query_as(&sql)
            .bind(branch.id.to_string())
            .bind(branch.title)
            .bind(from.at_seq as i64)
            .bind(branch.now_ms)
            .bind(from.parent.to_string())
            .fetch_one(&mut *tx)
            .await?;
        if let Some(run) = branch.waiting {
            use crate::store::sql::interrupts::{BRANCH_WAITS, COPY_WAITING};
            let copied = sqlx::query(COPY_WAITING)
                .bind(branch.id.to_string())
                .bind(branch.now_ms)
                .bind(from.parent.to_string())
                .bind(run)
                .execute(&mut *tx)
                .await?;
            if copied.rows_affected() > 0 {
                sqlx::query(BRANCH_WAITS)
                    .bind(run)
                    .bind(branch.id.to_string())
                    .execute(&mut *tx)
                    .await?;
                row.3 = SessionStatus::AwaitingInput.as_str().to_string();
                row.4 = Some(run.to_string());
            }
        }
        feed::announce(&mut tx, &Change::Listed { session: branch.id }).await?;
        tx.commit().await?;
        session_from(row).map(Some)
    }

    async fn delete_session(&self, id: SessionId) -> Result<bool, StoreError> {
        apply::delete_session(&self.pool, id).await
    }

    async fn events_after(
        &self,
        id: SessionId,
        after: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        reads::events_after(&self.pool, id, after, limit).await
    }

    async fn frames_after(
        &self,
        id: SessionId,
        after: u64,
        limit: u32,
    ) -> Result<FramePage, StoreError> {
        reads::frames_after(&self.pool, id, after, limit).await
    }

    async fn changes(&self) -> Result<Option<UnboundedReceiver<Change>>, StoreError> {
        feed::listen(self.options.clone(), self.writer.backends())
            .await
            .map(Some)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    fn log_writers(&self) -> usize {
        self.writers
    }

    async fn log_upkeep(&self) -> Result<super::Upkeep, StoreError> {
        let swept = self
            .purged
            .sweep_if_due(&self.pool, crate::domain::now_ms())
            .await?;
        if swept > 0 {
            tracing::info!(
                swept,
                "deleted rows appended to sessions as they were purged"
            );
        }
        Ok(super::Upkeep::Done)
    }

    /// Nothing to settle: a committed row is where every read finds it.
    async fn settle_log(&self) -> Result<(), StoreError> {
        Ok(())
    }

    async fn apply(&self, batch: &[Command], now_ms: i64) -> Result<Vec<Applied>, StoreError> {
        let mut attempt = 1;
        loop {
            match self.apply_once(batch, now_ms).await {
                Err(StoreError::SeqTaken(error)) if attempt < SEQ_ATTEMPTS => {
                    tracing::debug!(%error, attempt, "a seq was taken; committing again");
                    attempt += 1;
                }
                outcome => return outcome,
            }
        }
    }
}

impl PostgresStore {
    /// One attempt at [`EventLog::apply`]: the heads it leaves are recorded, and those of
    /// the batch's sessions forgotten if it fails.
    async fn apply_once(&self, batch: &[Command], now_ms: i64) -> Result<Vec<Applied>, StoreError> {
        let mut conn = self.writer.take().await?;
        if tokens::fits(batch) {
            let applied = tokens::append_tokens(&mut conn, &self.lease, &self.heads, batch).await?;
            self.writer.give_back(conn);
            return Ok(applied);
        }
        let committed = async {
            let mut tx = sqlx::Connection::begin(&mut *conn).await?;
            let applied = apply::apply_in_transaction(&mut tx, &self.lease, batch, now_ms).await?;
            tx.commit().await?;
            Ok::<_, StoreError>(applied)
        };
        let applied = match committed.await {
            Ok(applied) => applied,
            Err(error) => {
                self.heads
                    .forget(batch.iter().map(|command| command.session));
                return Err(error);
            }
        };
        self.writer.give_back(conn);
        // In batch order, so a session's later command leaves the later head.
        let heads = batch.iter().zip(&applied).filter_map(|(command, applied)| {
            let count = command.entries.len() as i64;
            match applied {
                Applied::Committed { first_seq } if count > 0 => {
                    Some((command.session, *first_seq as i64 + count - 1))
                }
                _ => None,
            }
        });
        self.heads.record(heads);
        Ok(applied)
    }
}

#[cfg(test)]
mod contract_tests;
