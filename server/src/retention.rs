//! Retention: a periodic task that deletes finished sessions past a configured age, with
//! their events, and closes their sockets. Sessions running or awaiting input are never
//! deleted (the store's query only takes idle ones). Off unless configured.

use std::sync::Arc;
use std::time::Duration;

use crate::domain::now_ms;
use crate::eventlog::Hub;
use crate::lifecycle::Lifecycle;
use crate::store::Store;

/// How often retention looks for old sessions.
pub const RETENTION_EVERY: Duration = Duration::from_secs(60);
/// Sessions deleted per statement (the task loops until none are left).
const BATCH: u32 = 500;

/// Starts the task: every `every`, deletes idle sessions not updated for `max_age`, until
/// the process stops.
pub fn spawn<S: Store>(
    store: Arc<S>,
    hub: Hub,
    (max_age, every): (Duration, Duration),
    lifecycle: &Lifecycle,
) {
    let stop = lifecycle.halting().clone();
    lifecycle.spawn(async move {
        let mut tick = crate::lifecycle::steady_interval(every);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            match sweep(&*store, &hub, max_age).await {
                Ok(0) => {}
                Ok(deleted) => tracing::info!(deleted, "retention deleted finished sessions"),
                Err(error) => tracing::warn!(%error, "retention failed; retrying next time"),
            }
        }
    });
}

/// Deletes every idle session older than `max_age`; returns how many.
pub async fn sweep<S: Store>(
    store: &S,
    hub: &Hub,
    max_age: Duration,
) -> Result<usize, crate::store::StoreError> {
    let age_ms = i64::try_from(max_age.as_millis()).unwrap_or(i64::MAX);
    let cutoff = now_ms().saturating_sub(age_ms);
    let mut deleted = 0;
    loop {
        let ids = store.delete_idle_before(cutoff, BATCH).await?;
        ids.iter().for_each(|&id| hub.close(id));
        deleted += ids.len();
        if ids.len() < BATCH as usize {
            return Ok(deleted);
        }
    }
}
