//! Run leases on SQLite. One process uses a SQLite file, so at start a lease another
//! process held belongs to a process that is gone: it is taken over at once, without
//! waiting for it to lapse. Later, only lapsed leases are.

use sqlx::SqlitePool;

use crate::domain::SessionId;
use crate::store::leases::LeaseTerms;
use crate::store::rows::session_id_of;
use crate::store::StoreError;

crate::store::sql::leases::leases_on!(SqlitePool, super::SqliteStore);

pub(super) async fn take_over(
    pool: &SqlitePool,
    lease: &LeaseTerms,
    now_ms: i64,
    starting: bool,
) -> Result<Vec<SessionId>, StoreError> {
    let ids: Vec<(String,)> = sqlx::query_as(
        "INSERT INTO run_leases (session_id, run_id, owner, epoch, expires_at) \
         SELECT s.id, coalesce(s.active_run_id, ''), $1, 1, $2 FROM sessions s \
         LEFT JOIN run_leases l ON l.session_id = s.id \
         WHERE s.status = 'running' AND (l.session_id IS NULL \
           OR (l.owner <> $1 AND ($3 OR l.expires_at < $4))) \
         ORDER BY s.updated_at, s.id \
         ON CONFLICT (session_id) DO UPDATE SET run_id = excluded.run_id, \
           owner = excluded.owner, epoch = run_leases.epoch + 1, expires_at = excluded.expires_at \
         RETURNING session_id",
    )
    .bind(&lease.owner)
    .bind(lease.expires_at(now_ms))
    .bind(starting)
    .bind(now_ms)
    .fetch_all(pool)
    .await?;
    ids.into_iter().map(session_id_of).collect()
}

/// Hands back this instance's leases; returns how many.
pub(super) async fn release(pool: &SqlitePool, lease: &LeaseTerms) -> Result<u64, StoreError> {
    let done = sqlx::query(crate::store::sql::leases::RELEASE)
        .bind(&lease.owner)
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}
