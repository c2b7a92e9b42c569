//! Retention on SQLite: finished sessions past the retention age.

use sqlx::SqlitePool;

use crate::domain::SessionId;
use crate::store::rows::session_id_of;
use crate::store::sql::sessions::PURGE_HIDDEN;
use crate::store::StoreError;

/// Deletes idle sessions (with their events) not updated since `cutoff_ms`; a session
/// running or awaiting input is never touched. Returns the deleted ids.
pub(super) async fn delete_idle_before(
    pool: &SqlitePool,
    cutoff_ms: i64,
    limit: u32,
) -> Result<Vec<SessionId>, StoreError> {
    let ids: Vec<(String,)> = sqlx::query_as(
        "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions s \
         WHERE status = 'idle' AND updated_at < ? \
           AND NOT EXISTS (SELECT 1 FROM sessions b WHERE b.parent_id = s.id) \
         ORDER BY updated_at LIMIT ?) \
         AND status = 'idle' RETURNING id",
    )
    .bind(cutoff_ms)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    // A branch that went may have been the last one reading a hidden parent's rows.
    while !sqlx::query(PURGE_HIDDEN).fetch_all(pool).await?.is_empty() {}
    ids.into_iter().map(session_id_of).collect()
}
