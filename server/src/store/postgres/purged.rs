//! What a bare append left after its session was purged ([`super::tokens`]): a purge is
//! remembered in `purged_sessions` (migration 0013), and once no append that began before
//! it can still commit, the rows such appends left are deleted with the memory of it.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use sqlx::PgPool;

use crate::store::StoreError;

/// How often an instance's writers look for such rows (at their next idle moment).
const EVERY: Duration = Duration::from_secs(30);
/// The least time after a purge before its session's rows are swept: a bare append's
/// statement takes milliseconds, and its only waits are lock waits, each bounded by the
/// lock timeout (the sweep waits at least three of those).
const AFTER: Duration = Duration::from_secs(60);

/// When this instance last swept.
pub(super) struct Sweeper {
    last: Mutex<Option<Instant>>,
    /// How long after a purge its rows are swept.
    after: Duration,
}

impl Sweeper {
    /// A sweeper for a store whose statements wait at most `lock_timeout` for a lock.
    pub(super) fn new(lock_timeout: Duration) -> Self {
        Self {
            last: Mutex::new(None),
            after: AFTER.max(lock_timeout * 3),
        }
    }

    /// Sweeps if the last sweep was long enough ago (or never ran); returns how many rows
    /// went.
    pub(super) async fn sweep_if_due(&self, pool: &PgPool, now_ms: i64) -> Result<u64, StoreError> {
        {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|at| at.elapsed() < EVERY) {
                return Ok(0);
            }
            *last = Some(Instant::now());
        }
        let cutoff = now_ms - i64::try_from(self.after.as_millis()).unwrap_or(i64::MAX);
        sweep(pool, cutoff).await
    }
}

/// Deletes the rows of sessions purged before `cutoff_ms`, and forgets those purges;
/// returns how many rows went.
pub(super) async fn sweep(pool: &PgPool, cutoff_ms: i64) -> Result<u64, StoreError> {
    let done = sqlx::query(
        "WITH forgotten AS (DELETE FROM purged_sessions WHERE purged_at < $1 RETURNING id) \
         DELETE FROM events WHERE session_id IN (SELECT id FROM forgotten)",
    )
    .bind(cutoff_ms)
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}
