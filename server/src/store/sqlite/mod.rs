//! The embedded backend: one SQLite file in WAL mode with foreign keys on.
//!
//! Writes come only through [`Store::apply`], called by the single log writer, and run in
//! `BEGIN IMMEDIATE` transactions so the write lock is taken up front. `synchronous =
//! NORMAL`: a commit survives a process crash; a power cut may lose the last moments.

use std::str::FromStr;
use std::time::Duration;

use shared::api::SessionStatus;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{QueryBuilder, Sqlite, SqliteConnection, SqlitePool};

mod guards;
mod housekeeping;

use guards::check_guard;

use super::{
    derive_effects, Applied, Command, InterruptRow, InterruptState, Rejection, SessionRow, Store,
    StoreError, StoredEvent, DEFAULT_TITLE,
};
use crate::domain::SessionId;

/// Rows per multi-row INSERT (3 parameters each, far below SQLite's limit).
const INSERT_CHUNK: usize = 500;

type SessionTuple = (String, String, String, Option<String>, i64, i64, i64);
const SESSION_COLUMNS: &str = "id, title, status, active_run_id, last_seq, created_at, updated_at";

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
        if let Some(parent) = options.get_filename().parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent).map_err(|e| {
                    StoreError::Corrupt(format!("cannot create {}: {e}", parent.display()))
                })?;
            }
        }
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

fn session_from(row: SessionTuple) -> Result<SessionRow, StoreError> {
    let (id, title, status, active_run_id, last_seq, created_at, updated_at) = row;
    Ok(SessionRow {
        id: SessionId::parse(&id).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        title,
        status: SessionStatus::parse(&status)
            .ok_or_else(|| StoreError::Corrupt(format!("status `{status}`")))?,
        active_run_id,
        last_seq: last_seq as u64,
        created_at,
        updated_at,
    })
}

type InterruptTuple = (
    String,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
);

fn interrupt_from(row: InterruptTuple) -> Result<InterruptRow, StoreError> {
    let (id, session_id, run_id, tool_call_id, interrupt, state, response, resumed_run_id) = row;
    let corrupt = |e: &dyn std::fmt::Display| StoreError::Corrupt(e.to_string());
    Ok(InterruptRow {
        id,
        session_id: SessionId::parse(&session_id).map_err(|e| corrupt(&e))?,
        run_id,
        tool_call_id,
        interrupt: serde_json::from_str(&interrupt).map_err(|e| corrupt(&e))?,
        state: InterruptState::parse(&state),
        response: response
            .map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(|e| corrupt(&e))?,
        resumed_run_id,
    })
}

const INTERRUPT_COLUMNS: &str =
    "id, session_id, run_id, tool_call_id, interrupt, status, response, resumed_run_id";

impl Store for SqliteStore {
    async fn create_session(
        &self,
        id: SessionId,
        title: Option<&str>,
        now_ms: i64,
    ) -> Result<SessionRow, StoreError> {
        let auto_title = title.is_none();
        let title = title.unwrap_or(DEFAULT_TITLE);
        sqlx::query(
            "INSERT INTO sessions (id, title, auto_title, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(id.to_string())
        .bind(title)
        .bind(auto_title)
        .bind(now_ms)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(SessionRow {
            id,
            title: title.to_string(),
            status: SessionStatus::Idle,
            active_run_id: None,
            last_seq: 0,
            created_at: now_ms,
            updated_at: now_ms,
        })
    }

    async fn list_sessions(&self) -> Result<Vec<SessionRow>, StoreError> {
        let sql =
            format!("SELECT {SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, id DESC");
        let rows: Vec<SessionTuple> = sqlx::query_as(&sql).fetch_all(&self.pool).await?;
        rows.into_iter().map(session_from).collect()
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
        let ids: Vec<(String,)> = sqlx::query_as("SELECT id FROM sessions WHERE status = ?")
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

/// Checks each guard and applies the commands that pass; rows are inserted at the end,
/// many per statement.
async fn apply_in_transaction(
    conn: &mut SqliteConnection,
    batch: &[Command],
    now_ms: i64,
) -> Result<Vec<Applied>, StoreError> {
    let mut applied = Vec::with_capacity(batch.len());
    let mut rows: Vec<(String, i64, &str)> = Vec::new();
    for command in batch {
        if let Some(rejection) = check_guard(conn, command, now_ms).await? {
            applied.push(Applied::Rejected(rejection));
            continue;
        }
        let session = command.session.to_string();
        let Some(first_seq) = advance_session(conn, command, &session, now_ms).await? else {
            applied.push(Applied::Rejected(Rejection::SessionMissing));
            continue;
        };
        for (offset, entry) in command.entries.iter().enumerate() {
            rows.push((
                session.clone(),
                first_seq + offset as i64,
                entry.json.as_str(),
            ));
        }
        applied.push(Applied::Committed {
            first_seq: first_seq as u64,
        });
    }
    for chunk in rows.chunks(INSERT_CHUNK) {
        let mut insert =
            QueryBuilder::<Sqlite>::new("INSERT INTO events (session_id, seq, event) ");
        insert.push_values(chunk, |mut row, (session, seq, json)| {
            row.push_bind(session.as_str())
                .push_bind(*seq)
                .push_bind(*json);
        });
        insert.build().execute(&mut *conn).await?;
    }
    Ok(applied)
}

/// Bumps `last_seq` (and the derived status), records raised interrupts; returns the
/// first seq of the command's entries, or `None` if the session does not exist.
async fn advance_session(
    conn: &mut SqliteConnection,
    command: &Command,
    session: &str,
    now_ms: i64,
) -> Result<Option<i64>, StoreError> {
    let effects = derive_effects(&command.entries);
    let count = command.entries.len() as i64;
    let last: Option<(i64,)> = match &effects.status {
        Some((status, run_id)) => {
            sqlx::query_as(
                "UPDATE sessions SET last_seq = last_seq + ?, updated_at = ?, status = ?, \
             active_run_id = ? WHERE id = ? RETURNING last_seq",
            )
            .bind(count)
            .bind(now_ms)
            .bind(status.as_str())
            .bind(run_id.as_deref())
            .bind(session)
            .fetch_optional(&mut *conn)
            .await?
        }
        None => {
            sqlx::query_as(
                "UPDATE sessions SET last_seq = last_seq + ?, updated_at = ? WHERE id = ? \
             RETURNING last_seq",
            )
            .bind(count)
            .bind(now_ms)
            .bind(session)
            .fetch_optional(&mut *conn)
            .await?
        }
    };
    let Some((last,)) = last else {
        return Ok(None);
    };
    for (run_id, interrupt) in &effects.interrupts {
        let json = serde_json::to_string(interrupt).expect("interrupts serialise");
        sqlx::query(
            "INSERT INTO interrupts \
             (id, session_id, run_id, tool_call_id, interrupt, created_at, expires_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&interrupt.id)
        .bind(session)
        .bind(run_id)
        .bind(interrupt.tool_call_id.as_deref().unwrap_or_default())
        .bind(json)
        .bind(now_ms)
        .bind(crate::domain::deadline_ms(interrupt))
        .execute(&mut *conn)
        .await?;
    }
    Ok(Some(last - count + 1))
}
