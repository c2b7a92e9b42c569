//! WAL checkpoints off the commit path. Every connection opens with
//! `wal_autocheckpoint = 0`, so no commit ever copies the WAL back into the database
//! (SQLite's default does that inside whichever commit crosses 1,000 pages: the long
//! tail of commit latency). This task does it instead: a `PASSIVE` checkpoint (it never
//! waits for a reader or the writer) every [`TICK`] in which something was committed,
//! and a `TRUNCATE` once the log has been quiet for [`QUIET`], so an idle file is compact.
//!
//! A checkpoint that fails (a full disk, say), or leaves more than [`BEHIND`] frames
//! behind, marks the WAL as behind. While it is, and the WAL file is past [`TOO_BIG`], the
//! writer checkpoints before its next commit, as SQLite would have, and a failure there
//! is that commit's error: a full disk still reaches the producers at once.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::SqlitePool;
use tokio::sync::Notify;
use tokio_util::sync::{CancellationToken, DropGuard};

/// How often the task checkpoints while the log is written.
const TICK: Duration = Duration::from_millis(200);
/// Frames a checkpoint may leave behind before the writer helps.
const BEHIND: i64 = 16_384;
/// WAL file size past which a writer helps a checkpointer that is behind.
pub(super) const TOO_BIG: u64 = 64 << 20;
/// How long without commits before the WAL is truncated.
const QUIET: Duration = Duration::from_secs(1);

/// What the writer and the checkpointer share.
#[derive(Default)]
pub(super) struct WalState {
    /// Commits so far (the checkpointer's sign of activity).
    commits: AtomicU64,
    /// Whether the last checkpoint failed or left too much behind.
    behind: AtomicBool,
    /// Woken after each checkpoint the task runs (what a test of it waits for).
    checkpointed: Notify,
}

impl WalState {
    /// Counts one commit.
    pub(super) fn committed(&self) {
        self.commits.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether the writer should checkpoint before its next commit: the checkpointer is
    /// behind and the WAL file is past [`TOO_BIG`].
    pub(super) fn writer_must_checkpoint(&self, wal: &std::path::Path) -> bool {
        self.behind.load(Ordering::Relaxed)
            && std::fs::metadata(wal).is_ok_and(|m| m.len() > TOO_BIG)
    }

    fn record(&self, outcome: &Result<(i64, i64, i64), sqlx::Error>) {
        let behind = match outcome {
            Ok((_busy, log, checkpointed)) => log - checkpointed > BEHIND,
            Err(error) => {
                tracing::warn!(%error, "a WAL checkpoint failed; retrying");
                true
            }
        };
        self.behind.store(behind, Ordering::Relaxed);
    }
}

/// The size of a WAL file (0 when it is missing).
#[cfg(test)]
fn wal_size(wal: &std::path::Path) -> u64 {
    std::fs::metadata(wal).map_or(0, |m| m.len())
}

/// Starts the checkpointer on `pool`; it stops when the returned guard is dropped.
pub(super) fn spawn(pool: SqlitePool, wal: PathBuf, state: Arc<WalState>) -> DropGuard {
    let stop = CancellationToken::new();
    let guard = stop.clone().drop_guard();
    tokio::spawn(async move {
        let mut checkpointed_at = state.commits.load(Ordering::Relaxed);
        let mut last_commit = Instant::now();
        let mut truncated = false;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(TICK) => {}
            }
            let commits = state.commits.load(Ordering::Relaxed);
            let mode = if commits != checkpointed_at {
                (last_commit, truncated) = (Instant::now(), false);
                "PASSIVE"
            } else if !truncated && last_commit.elapsed() >= QUIET && wal.exists() {
                "TRUNCATE"
            } else {
                continue;
            };
            let outcome = checkpoint(&pool, mode).await;
            if outcome.is_ok() {
                checkpointed_at = commits;
                truncated = mode == "TRUNCATE";
            }
            state.record(&outcome);
            state.checkpointed.notify_waiters();
        }
    });
    guard
}

/// Runs one checkpoint: `(busy, frames in the WAL, frames checkpointed)`.
pub(super) async fn checkpoint(
    pool: &SqlitePool,
    mode: &str,
) -> Result<(i64, i64, i64), sqlx::Error> {
    sqlx::query_as(&format!("PRAGMA wal_checkpoint({mode})"))
        .fetch_one(pool)
        .await
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{append, temp_store};
    use crate::domain::{now_ms, SessionId, UserId};
    use crate::store::{Applied, EventLog};

    #[tokio::test]
    async fn commits_leave_the_wal_alone_and_a_quiet_log_is_truncated() {
        let (_dir, store) = temp_store().await;
        let id = SessionId::generate();
        store
            .create_session(UserId::LOCAL, id, None, now_ms())
            .await
            .unwrap();
        let delta = "x".repeat(2_000);
        let deltas: Vec<&str> = (0..200).map(|_| delta.as_str()).collect();
        for _ in 0..20 {
            let applied = store.apply(&[append(id, &deltas)], now_ms()).await.unwrap();
            assert!(matches!(applied[..], [Applied::Committed { .. }]));
        }
        // About 8 MB went through the WAL; SQLite's own autocheckpoint would have reset
        // it at 4 MB inside a commit. Here the checkpointer copies it back, and once the
        // log is quiet it truncates the file.
        let wal = store.wal_path.clone();
        let truncated = async {
            loop {
                let checkpointed = store.wal.checkpointed.notified();
                tokio::pin!(checkpointed);
                checkpointed.as_mut().enable();
                if super::wal_size(&wal) == 0 {
                    return;
                }
                checkpointed.await;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(20), truncated)
            .await
            .expect("the WAL of a quiet log was not truncated");
        let events = store.events_after(id, 0, 10_000).await.unwrap();
        assert_eq!(
            events.len(),
            4_000,
            "every committed event is in the database"
        );
    }
}
