//! Run leases on PostgreSQL, shared by every instance. A lease is taken over only once it
//! has lapsed, and only under the session's row lock, which every locked append takes
//! first (and then reads the lease row's newest version: [`super::lease_fence`], so one
//! that waited for the lock through a takeover is refused). A bare append of the holder
//! ([`super::tokens`]) checks the lease in its own statement, without the lock: one that
//! began before the takeover committed may still commit just before or after it, and the
//! log's key orders it against the new holder's appends; one that begins after is
//! refused. The new holder's repair goes in only at the head it was computed from
//! ([`crate::store::Guard::Repair`]), so such a late append can never slip in between
//! the repair's read and its write: it lands before the read, or collides with the repair
//! on the key and is committed again the locked way, which refuses it.

use sqlx::PgPool;

use crate::domain::SessionId;
use crate::store::leases::LeaseTerms;
use crate::store::rows::session_id_of;
use crate::store::StoreError;

crate::store::sql::leases::leases_on!(PgPool, super::PostgresStore);

/// Several instances share the database, so `starting` changes nothing: an instance
/// takes only lapsed leases and those of its own earlier life.
pub(super) async fn take_over(
    pool: &PgPool,
    lease: &LeaseTerms,
    now_ms: i64,
    _starting: bool,
) -> Result<Vec<SessionId>, StoreError> {
    // Cheap and lock-free first: usually nothing has lapsed.
    let candidates: Vec<(String,)> = sqlx::query_as(LAPSED)
        .bind(now_ms)
        .bind(None::<Vec<String>>)
        .bind(&lease.owner)
        .bind(lease.lineage.as_deref())
        .fetch_all(pool)
        .await?;
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let candidates: Vec<String> = candidates.into_iter().map(|(id,)| id).collect();
    let mut tx = pool.begin().await?;
    // Rows another instance is writing (or taking over) right now are skipped: the next
    // sweep looks again.
    let locked: Vec<(String,)> = sqlx::query_as(
        "SELECT id FROM sessions WHERE id = ANY($1) ORDER BY id FOR UPDATE SKIP LOCKED",
    )
    .bind(&candidates)
    .fetch_all(&mut *tx)
    .await?;
    let locked: Vec<String> = locked.into_iter().map(|(id,)| id).collect();
    // A fresh snapshot under the row locks: a takeover that committed meanwhile shows.
    let lapsed: Vec<(String,)> = sqlx::query_as(LAPSED)
        .bind(now_ms)
        .bind(Some(&locked))
        .bind(&lease.owner)
        .bind(lease.lineage.as_deref())
        .fetch_all(&mut *tx)
        .await?;
    let lapsed: Vec<String> = lapsed.into_iter().map(|(id,)| id).collect();
    let taken: Vec<(String,)> = sqlx::query_as(
        "INSERT INTO run_leases (session_id, run_id, owner, epoch, expires_at) \
         SELECT id, coalesce(active_run_id, ''), $2, 1, $3 FROM sessions WHERE id = ANY($1) \
         ON CONFLICT (session_id) DO UPDATE SET run_id = excluded.run_id, \
           owner = excluded.owner, epoch = run_leases.epoch + 1, expires_at = excluded.expires_at \
         RETURNING session_id",
    )
    .bind(&lapsed)
    .bind(&lease.owner)
    .bind(lease.expires_at(now_ms))
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    taken.into_iter().map(session_id_of).collect()
}

/// Running sessions (among `$2` if given) whose lease lapsed, that have none, or whose
/// lease an earlier life of this instance (`$4`, owner `$3`) held.
const LAPSED: &str = "SELECT s.id FROM sessions s LEFT JOIN run_leases l ON l.session_id = s.id \
     WHERE s.status = 'running' AND (l.session_id IS NULL OR l.expires_at < $1 \
       OR ($4::text IS NOT NULL AND starts_with(l.owner, $4) AND l.owner <> $3)) \
       AND ($2::text[] IS NULL OR s.id = ANY($2)) \
     ORDER BY s.updated_at, s.id";

/// Hands back this instance's leases and, if there were any, tells the other instances
/// in the same transaction; returns how many.
pub(super) async fn release(pool: &PgPool, lease: &LeaseTerms) -> Result<u64, StoreError> {
    let mut tx = pool.begin().await?;
    let done = sqlx::query(crate::store::sql::leases::RELEASE)
        .bind(&lease.owner)
        .execute(&mut *tx)
        .await?;
    if done.rows_affected() > 0 {
        super::feed::announce(&mut tx, &crate::store::Change::LeasesReleased).await?;
    }
    tx.commit().await?;
    Ok(done.rows_affected())
}
