//! Queries beyond the basic log reads: interrupts past their deadline, finished sessions
//! past the retention age, and replay pages built as socket frames inside SQLite.

use sqlx::SqlitePool;

use super::{interrupt_from, InterruptTuple, INTERRUPT_COLUMNS};
use crate::domain::SessionId;
use crate::store::{FramePage, InterruptRow, StoreError};

/// A page of frames built by SQLite in one row: one value per page instead of one per
/// event, about five times faster to read than the rows themselves. The frame text must
/// match [`crate::eventlog::event_frame`] (a test checks it).
pub(super) async fn frames_after(
    pool: &SqlitePool,
    id: SessionId,
    after: u64,
    limit: u32,
) -> Result<FramePage, StoreError> {
    let row: (i64, Option<i64>, Option<String>) = sqlx::query_as(
        "SELECT count(*), max(seq), group_concat(frame, char(30)) FROM ( \
           SELECT seq, '{\"kind\":\"event\",\"seq\":' || seq || ',\"event\":' || event || '}' AS frame \
           FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?)",
    )
    .bind(id.to_string())
    .bind(after.min(i64::MAX as u64) as i64)
    .bind(limit)
    .fetch_one(pool)
    .await?;
    let (count, last, joined) = row;
    Ok(FramePage::from_joined(
        joined.filter(|_| count > 0),
        last,
        after,
    ))
}

/// Pending interrupts whose deadline has passed, earliest first.
pub(super) async fn expired_interrupts(
    pool: &SqlitePool,
    now_ms: i64,
    limit: u32,
) -> Result<Vec<InterruptRow>, StoreError> {
    let sql = format!(
        "SELECT {INTERRUPT_COLUMNS} FROM interrupts \
         WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ? \
         ORDER BY expires_at LIMIT ?"
    );
    let rows: Vec<InterruptTuple> = sqlx::query_as(&sql)
        .bind(now_ms)
        .bind(limit)
        .fetch_all(pool)
        .await?;
    rows.into_iter().map(interrupt_from).collect()
}

/// Deletes idle sessions (with their events) not updated since `cutoff_ms`; a session
/// running or awaiting input is never touched. Returns the deleted ids.
pub(super) async fn delete_idle_before(
    pool: &SqlitePool,
    cutoff_ms: i64,
    limit: u32,
) -> Result<Vec<SessionId>, StoreError> {
    let ids: Vec<(String,)> = sqlx::query_as(
        "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions \
         WHERE status = 'idle' AND updated_at < ? ORDER BY updated_at LIMIT ?) \
         AND status = 'idle' RETURNING id",
    )
    .bind(cutoff_ms)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    ids.into_iter()
        .map(|(id,)| SessionId::parse(&id).map_err(|e| StoreError::Corrupt(e.to_string())))
        .collect()
}
