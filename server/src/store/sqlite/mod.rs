//! The embedded backend: one SQLite file in WAL mode with foreign keys on.
//!
//! Log writes come only through [`EventLog::apply`], called by the single log writer, on a
//! connection of its own for the store's lifetime (no pool to wait for), in `BEGIN
//! IMMEDIATE` transactions so the write lock is taken up front, each batch in one hop;
//! creating and deleting sessions (also the writer's) use it too. That connection and
//! replay's read-only ones are the log engine's, rusqlite's for their whole life
//! ([`direct`]); every other connection is sqlx's for its whole life: read-only readers
//! for the records (never queueing behind the writer) and a small pool for the few other
//! writes (users, share links, leases, retention). `synchronous = NORMAL`: a commit
//! survives a process crash; a power cut may lose the last moments.

use shared::api::SessionStatus;
use std::sync::Arc;

use sqlx::SqlitePool;
use tokio::sync::Mutex;

mod announcer;
mod appended;
mod appends;
mod apply;
mod branches;
mod checkpoints;
mod connect;
mod direct;
mod fold;
mod guards;
mod housekeeping;
mod leases;
mod log;
mod raised;
mod reads;
mod records;
mod revocations;
mod sessions;
mod shaped;
mod tail;
#[cfg(test)]
pub(crate) mod test_support;

use apply::apply_batch;
pub use records::SqliteRecords;

/// Makes a transaction the only one of a user (`$1`) until it ends: on SQLite any write
/// does, since it takes the database's write lock (and a transaction that writes first
/// waits its turn instead of failing when another wrote since it read).
pub(crate) const HOLD_USER: &str = "UPDATE users SET revoked_at = revoked_at WHERE id = $1";
use checkpoints::WalState;

use super::leases::LeaseTerms;
use super::{
    Applied, Change, Command, ErrorKind, EventLog, FramePage, NewBranch, Replayed, SessionRow,
    StoreError, StoredEvent, Upkeep, DEFAULT_TITLE,
};
use crate::domain::{SessionId, UserId};

/// How SQLite's error codes read for the writer: busy, locked and I/O errors may clear,
/// a full disk clears once space is freed, anything else is fatal. `None` for an error
/// of another backend.
pub(super) fn classify(error: &(dyn sqlx::error::DatabaseError + 'static)) -> Option<ErrorKind> {
    let error = error.try_downcast_ref::<sqlx::sqlite::SqliteError>()?;
    let code = sqlx::error::DatabaseError::code(error).and_then(|c| c.parse::<i64>().ok());
    // Primary codes (the low byte of an extended code): BUSY 5, LOCKED 6, IOERR 10, FULL 13.
    Some(match code.map(|c| c & 0xff) {
        Some(5 | 6 | 10) => ErrorKind::Unavailable,
        Some(13) => ErrorKind::Full,
        _ => ErrorKind::Fatal,
    })
}

/// A [`Store`](crate::store::Store) on a SQLite file.
#[derive(Clone)]
pub struct SqliteStore {
    /// Writes outside the log writer (users, share links, leases, retention).
    pool: SqlitePool,
    /// Read-only connections for every read.
    reads: SqlitePool,
    /// The log writer's own connection (rusqlite's).
    writer: Arc<Mutex<direct::WriterConnection>>,
    /// The log engine's read-only connections, for replay (rusqlite's).
    replay: Arc<direct::Readers>,
    lease: LeaseTerms,
    /// The writer's memory of the log's tail and its mark on the log.
    log: Arc<log::LogState>,
    /// Commits and checkpoint failures, shared with the checkpointer.
    wal: Arc<WalState>,
    wal_path: std::path::PathBuf,
    /// Where this process hears what changed (the changes PostgreSQL would `NOTIFY`).
    announcer: announcer::Announcer,
    /// Stops the checkpointer when the last clone of the store goes.
    _checkpointer: Arc<tokio_util::sync::DropGuard>,
}

impl EventLog for SqliteStore {
    async fn create_session(
        &self,
        owner: UserId,
        id: SessionId,
        title: Option<&str>,
        now_ms: i64,
    ) -> Result<SessionRow, StoreError> {
        let auto_title = title.is_none();
        let title = title.unwrap_or(DEFAULT_TITLE);
        self.writer.lock().await.with(|conn| {
            conn.prepare_cached(
                "INSERT INTO sessions (id, owner_id, title, auto_title, created_at, updated_at) \
                 VALUES (?, ?, ?, ?, ?, ?)",
            )?
            .execute(rusqlite::params![
                id.to_string(),
                owner.to_string(),
                title,
                auto_title,
                now_ms,
                now_ms
            ])?;
            Ok(())
        })?;
        self.announcer.tell([Change::Listed { session: id }]);
        Ok(SessionRow::created(id, owner, title, now_ms))
    }

    async fn fork_session(&self, branch: NewBranch<'_>) -> Result<Option<SessionRow>, StoreError> {
        let NewBranch {
            id,
            fork,
            waiting,
            title,
            now_ms,
        } = branch;
        let tail = &self.log.tail;
        let named = title.is_some();
        let created = self.writer.lock().await.with(|conn| {
            // IMMEDIATE, as every write: the fork reads the line before it writes, and a
            // deferred read transaction that the log's writer commits past cannot take the
            // write lock (SQLITE_BUSY at once, no busy wait).
            log::in_transaction(conn, || {
                let Some(from) = branches::branch_point(conn, tail, fork)? else {
                    return Ok(None);
                };
                let (owner, parent_title, auto_title, conversation): (
                    String,
                    String,
                    bool,
                    String,
                ) = conn.query_row(
                    "SELECT owner_id, title, auto_title, coalesce(root_id, id) FROM sessions \
                     WHERE id = ?",
                    [from.parent.to_string()],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
                )?;
                let title = title.map_or(parent_title, str::to_string);
                conn.prepare_cached(
                    "INSERT INTO sessions (id, owner_id, title, auto_title, last_seq, created_at, \
                   updated_at, parent_id, fork_seq, root_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                )?
                .execute(rusqlite::params![
                    id.to_string(),
                    owner,
                    title,
                    auto_title && !named,
                    from.at_seq as i64,
                    now_ms,
                    now_ms,
                    from.parent.to_string(),
                    from.at_seq as i64,
                    conversation
                ])?;
                let mut status = SessionStatus::Idle;
                if let Some(run) = waiting {
                    use crate::store::sql::interrupts::{BRANCH_WAITS, COPY_WAITING};
                    let copied = conn
                        .prepare_cached(COPY_WAITING)?
                        .execute(rusqlite::params![
                            id.to_string(),
                            now_ms,
                            from.parent.to_string(),
                            run
                        ])?;
                    if copied > 0 {
                        conn.prepare_cached(BRANCH_WAITS)?
                            .execute(rusqlite::params![run, id.to_string()])?;
                        status = SessionStatus::AwaitingInput;
                    }
                }
                let owner =
                    UserId::parse(&owner).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                Ok(Some(SessionRow {
                    id,
                    owner,
                    title,
                    status,
                    active_run_id: (status == SessionStatus::AwaitingInput)
                        .then(|| waiting.map(str::to_string))
                        .flatten(),
                    last_seq: from.at_seq,
                    created_at: now_ms,
                    updated_at: now_ms,
                    fork: Some(from),
                    conversation: SessionId::parse(&conversation)
                        .map_err(|e| StoreError::Corrupt(e.to_string()))?,
                }))
            })
        })?;
        if created.is_some() {
            self.announcer.tell([Change::Listed { session: id }]);
        }
        Ok(created)
    }

    async fn delete_session(&self, id: SessionId) -> Result<bool, StoreError> {
        let deleted = self
            .writer
            .lock()
            .await
            .with(|conn| branches::delete(conn, id))?;
        // The tail rows of the sessions that went went with them.
        for gone in &deleted.gone {
            self.log.tail.forget(*gone);
        }
        if deleted.found {
            self.announcer.tell([Change::Deleted { session: id }]);
        }
        Ok(deleted.found)
    }

    async fn events_after(
        &self,
        id: SessionId,
        after: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        reads::events_after(&self.replay, &self.log.tail, id, after, limit).await
    }

    async fn frames_after(
        &self,
        id: SessionId,
        after: u64,
        limit: u32,
    ) -> Result<FramePage, StoreError> {
        reads::frames_after(&self.replay, &self.log.tail, id, after, limit).await
    }

    async fn replay_after(
        &self,
        id: SessionId,
        after: u64,
        limit: u32,
        sink: &mut (dyn FnMut(u64, &str) + Send),
    ) -> Result<Replayed, StoreError> {
        reads::replay_after(&self.replay, &self.log.tail, id, after, limit, sink).await
    }

    async fn changes(
        &self,
    ) -> Result<Option<tokio::sync::mpsc::UnboundedReceiver<super::Change>>, StoreError> {
        let (sender, receiver) = self.announcer.listen();
        revocations::watch(self.reads.clone(), sender).await?;
        Ok(Some(receiver))
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.reads).await?;
        Ok(())
    }

    async fn log_upkeep(&self) -> Result<Upkeep, StoreError> {
        let upkeep = self.log.plan_upkeep();
        if upkeep.is_empty() {
            return Ok(self.log.next_upkeep());
        }
        let mut conn = self.writer.lock().await;
        conn.with(|direct| self.log.run_upkeep(direct, &upkeep))?;
        self.wal.committed();
        Ok(self.log.next_upkeep())
    }

    async fn settle_log(&self) -> Result<(), StoreError> {
        let mut conn = self.writer.lock().await;
        conn.with(|direct| self.log.settle(direct))?;
        self.wal.committed();
        Ok(())
    }

    async fn apply(&self, batch: &[Command], now_ms: i64) -> Result<Vec<Applied>, StoreError> {
        let mut conn = self.writer.lock().await;
        let must_checkpoint = self.wal.writer_must_checkpoint(&self.wal_path);
        let result = conn.with(|direct| {
            if must_checkpoint {
                // The checkpointer fails or cannot keep up: checkpoint here, as SQLite
                // would have; a failure (a full disk) is the producers' error at once.
                direct.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
            }
            apply_batch(direct, &self.lease, &self.log, batch, now_ms)
        });
        match result {
            Ok((applied, announced)) => {
                self.wal.committed();
                self.announcer.tell(announced);
                Ok(applied)
            }
            // Nothing was committed. If the connection no longer answers, the next batch
            // gets a new one.
            Err(error) => {
                if !conn.answers() {
                    conn.reopen()?;
                }
                Err(error)
            }
        }
    }
}

#[cfg(test)]
mod contract_tests;
