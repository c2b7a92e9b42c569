//! The embedded backend: one SQLite file in WAL mode with foreign keys on.
//!
//! Writes come only through [`Store::apply`], called by the single log writer, and run in
//! `BEGIN IMMEDIATE` transactions so the write lock is taken up front. `synchronous =
//! NORMAL`: a commit survives a process crash; a power cut may lose the last moments.

use std::str::FromStr;
use std::time::Duration;

use shared::api::SessionStatus;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

mod appends;
mod apply;
mod guards;
mod housekeeping;
mod rows;
mod shares;
#[cfg(test)]
pub(crate) mod test_support;
mod users;

use apply::apply_in_transaction;
use rows::{
    interrupt_from, session_from, InterruptTuple, SessionTuple, INTERRUPT_COLUMNS, SESSION_COLUMNS,
};

use super::{
    Applied, Command, ErrorKind, FramePage, InterruptRow, SessionRow, ShareRow, Store, StoreError,
    StoredEvent, UserRow, DEFAULT_TITLE,
};
use crate::domain::{SessionId, TokenHash, UserId, UserName};

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

/// A [`Store`] on a SQLite file.
#[derive(Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if missing, with its folder) the database at `url` and migrates it.
    /// A write waits up to `busy_timeout` for a lock another process holds.
    pub async fn connect(url: &str, busy_timeout: Duration) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(busy_timeout);
        create_private(options.get_filename())
            .map_err(|e| StoreError::Corrupt(format!("cannot create the database file: {e}")))?;
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await?;
        sqlx::migrate!("../migrations/sqlite").run(&pool).await?;
        Ok(Self { pool })
    }

    /// The pool, for tests and tools that inspect the file.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}

/// Creates the database file (and its folder) readable by the owner only, if missing.
/// SQLite gives its `-wal` and `-shm` files the database file's permissions.
fn create_private(file: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if file.as_os_str().is_empty() || file.as_os_str() == ":memory:" {
        return Ok(());
    }
    if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)?;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
    {
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other.map(drop),
    }
}

impl Store for SqliteStore {
    async fn create_session(
        &self,
        owner: UserId,
        id: SessionId,
        title: Option<&str>,
        now_ms: i64,
    ) -> Result<SessionRow, StoreError> {
        let auto_title = title.is_none();
        let title = title.unwrap_or(DEFAULT_TITLE);
        sqlx::query(
            "INSERT INTO sessions (id, owner_id, title, auto_title, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(id.to_string())
        .bind(owner.to_string())
        .bind(title)
        .bind(auto_title)
        .bind(now_ms)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(SessionRow {
            id,
            owner,
            title: title.to_string(),
            status: SessionStatus::Idle,
            active_run_id: None,
            last_seq: 0,
            created_at: now_ms,
            updated_at: now_ms,
        })
    }

    async fn list_sessions(&self, owner: UserId) -> Result<Vec<SessionRow>, StoreError> {
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE owner_id = ? \
             ORDER BY updated_at DESC, id DESC"
        );
        let rows: Vec<SessionTuple> = sqlx::query_as(&sql)
            .bind(owner.to_string())
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter().map(session_from).collect()
    }

    async fn search_sessions(
        &self,
        owner: UserId,
        text: &str,
    ) -> Result<Vec<SessionRow>, StoreError> {
        shares::search_sessions(&self.pool, owner, text).await
    }

    async fn rename_session(
        &self,
        id: SessionId,
        title: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        shares::rename_session(&self.pool, id, title, now_ms).await
    }

    async fn create_share(&self, share: &ShareRow, token: TokenHash) -> Result<(), StoreError> {
        shares::create_share(&self.pool, share, token).await
    }

    async fn shares(&self, session: SessionId) -> Result<Vec<ShareRow>, StoreError> {
        shares::shares(&self.pool, session).await
    }

    async fn delete_share(&self, session: SessionId, id: &str) -> Result<bool, StoreError> {
        shares::delete_share(&self.pool, session, id).await
    }

    async fn share_for_token(
        &self,
        token: TokenHash,
    ) -> Result<Option<(ShareRow, TokenHash)>, StoreError> {
        shares::share_for_token(&self.pool, token).await
    }

    async fn session(&self, id: SessionId) -> Result<Option<SessionRow>, StoreError> {
        let sql = format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?");
        let row: Option<SessionTuple> = sqlx::query_as(&sql)
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?;
        row.map(session_from).transpose()
    }

    async fn sessions_with_status(
        &self,
        status: SessionStatus,
    ) -> Result<Vec<SessionId>, StoreError> {
        let ids: Vec<(String,)> =
            sqlx::query_as("SELECT id FROM sessions WHERE status = ? ORDER BY updated_at, id")
                .bind(status.as_str())
                .fetch_all(&self.pool)
                .await?;
        ids.into_iter()
            .map(|(id,)| SessionId::parse(&id).map_err(|e| StoreError::Corrupt(e.to_string())))
            .collect()
    }

    async fn delete_session(&self, id: SessionId) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM sessions WHERE id = ?")
            .bind(id.to_string())
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn events_after(
        &self,
        id: SessionId,
        after: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT seq, event FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        )
        .bind(id.to_string())
        .bind(after.min(i64::MAX as u64) as i64)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(seq, json)| StoredEvent {
                seq: seq as u64,
                json,
            })
            .collect())
    }

    async fn frames_after(
        &self,
        id: SessionId,
        after: u64,
        limit: u32,
    ) -> Result<FramePage, StoreError> {
        housekeeping::frames_after(&self.pool, id, after, limit).await
    }

    async fn interrupt(
        &self,
        session: SessionId,
        interrupt_id: &str,
    ) -> Result<Option<InterruptRow>, StoreError> {
        let sql =
            format!("SELECT {INTERRUPT_COLUMNS} FROM interrupts WHERE id = ? AND session_id = ?");
        let row: Option<InterruptTuple> = sqlx::query_as(&sql)
            .bind(interrupt_id)
            .bind(session.to_string())
            .fetch_optional(&self.pool)
            .await?;
        row.map(interrupt_from).transpose()
    }

    async fn pending_interrupts(
        &self,
        session: SessionId,
    ) -> Result<Vec<InterruptRow>, StoreError> {
        let sql = format!(
            "SELECT {INTERRUPT_COLUMNS} FROM interrupts WHERE session_id = ? AND status = 'pending' \
             ORDER BY created_at, id"
        );
        let rows: Vec<InterruptTuple> = sqlx::query_as(&sql)
            .bind(session.to_string())
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter().map(interrupt_from).collect()
    }

    async fn expired_interrupts(
        &self,
        now_ms: i64,
        limit: u32,
    ) -> Result<Vec<InterruptRow>, StoreError> {
        housekeeping::expired_interrupts(&self.pool, now_ms, limit).await
    }

    async fn delete_idle_before(
        &self,
        cutoff_ms: i64,
        limit: u32,
    ) -> Result<Vec<SessionId>, StoreError> {
        housekeeping::delete_idle_before(&self.pool, cutoff_ms, limit).await
    }

    async fn create_user(
        &self,
        id: UserId,
        name: &UserName,
        token: TokenHash,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        users::create_user(&self.pool, id, name, token, now_ms).await
    }

    async fn user(&self, id: UserId) -> Result<Option<UserRow>, StoreError> {
        users::user(&self.pool, id).await
    }

    async fn list_users(&self) -> Result<Vec<UserRow>, StoreError> {
        users::list_users(&self.pool).await
    }

    async fn revoke_user(&self, name: &UserName, now_ms: i64) -> Result<bool, StoreError> {
        users::revoke_user(&self.pool, name, now_ms).await
    }

    async fn user_for_token(
        &self,
        token: TokenHash,
    ) -> Result<Option<(UserRow, TokenHash)>, StoreError> {
        users::user_for_token(&self.pool, token).await
    }

    async fn create_sign_in(
        &self,
        cookie: TokenHash,
        user: UserId,
        now_ms: i64,
        expires_at_ms: i64,
    ) -> Result<(), StoreError> {
        users::create_sign_in(&self.pool, cookie, user, now_ms, expires_at_ms).await
    }

    async fn user_for_sign_in(
        &self,
        cookie: TokenHash,
        now_ms: i64,
    ) -> Result<Option<(UserRow, TokenHash)>, StoreError> {
        users::user_for_sign_in(&self.pool, cookie, now_ms).await
    }

    async fn delete_sign_in(&self, cookie: TokenHash) -> Result<bool, StoreError> {
        users::delete_sign_in(&self.pool, cookie).await
    }

    async fn apply(&self, batch: &[Command], now_ms: i64) -> Result<Vec<Applied>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
        let result = match apply_in_transaction(&mut conn, batch, now_ms).await {
            Ok(applied) => sqlx::query("COMMIT")
                .execute(&mut *conn)
                .await
                .map(|_| applied)
                .map_err(StoreError::from),
            Err(error) => Err(error),
        };
        if result.is_err() {
            // Nothing was committed; leave the connection outside any transaction. If the
            // rollback fails too, the connection is broken and sqlx discards it.
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
        }
        result
    }
}

#[cfg(test)]
mod contract_tests;
