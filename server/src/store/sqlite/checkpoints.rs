//! WAL checkpoints off the commit path. Every connection opens with
//! `wal_autocheckpoint = 0`, so no commit ever copies the WAL back into the database
//! (SQLite's default does that inside whichever commit crosses 1,000 pages: the long
//! tail of commit latency). This task does it instead: a `PASSIVE` checkpoint (it never
//! waits for a reader or the writer) whenever the WAL has grown past [`GROWN`], and a
//! `TRUNCATE` once the log has been quiet for [`QUIET`], so an idle file is compact.
//!
//! A checkpoint that fails (a full disk, say) is retried at the next tick, its error kept.
//! Should the WAL pass [`TOO_BIG`] (checkpoints failing, or not keeping up), the writer
//! checkpoints before its next commit, as SQLite would have, and a failure there is that
//! commit's error: a full disk still reaches the producers at once.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::SqlitePool;
use tokio_util::sync::{CancellationToken, DropGuard};

/// How often the task looks at the WAL.
const TICK: Duration = Duration::from_millis(100);
/// WAL size that triggers a passive checkpoint (SQLite's own default: 1,000 pages).
const GROWN: u64 = 4 << 20;
/// WAL size at which the writer stops relying on this task.
pub(super) const TOO_BIG: u64 = 64 << 20;
/// How long without commits before the WAL is truncated.
const QUIET: Duration = Duration::from_secs(1);

/// What the writer and the checkpointer share.
#[derive(Default)]
pub(super) struct WalState {
    /// Commits so far (the checkpointer's sign of activity).
    commits: AtomicU64,
    /// The last checkpoint's failure, if it failed.
    failure: Mutex<Option<String>>,
}

impl WalState {
    /// Counts one commit.
    pub(super) fn committed(&self) {
        self.commits.fetch_add(1, Ordering::Relaxed);
    }

    /// Why the last checkpoint failed, if it did.
    pub(super) fn failure(&self) -> Option<String> {
        self.failure.lock().ok().and_then(|f| f.clone())
    }

    fn record(&self, outcome: Result<(), sqlx::Error>) {
        let failure = match outcome {
            Ok(()) => None,
            Err(error) => {
                tracing::warn!(%error, "a WAL checkpoint failed; retrying");
                Some(error.to_string())
            }
        };
        if let Ok(mut slot) = self.failure.lock() {
            *slot = failure;
        }
    }
}

/// The size of the WAL file (0 when missing).
pub(super) fn wal_size(wal: &std::path::Path) -> u64 {
    std::fs::metadata(wal).map_or(0, |m| m.len())
}

/// Starts the checkpointer on `pool`; it stops when the returned guard is dropped.
pub(super) fn spawn(pool: SqlitePool, wal: PathBuf, state: Arc<WalState>) -> DropGuard {
    let stop = CancellationToken::new();
    let guard = stop.clone().drop_guard();
    tokio::spawn(async move {
        let mut seen = state.commits.load(Ordering::Relaxed);
        let mut last_commit = Instant::now();
        let mut truncated = false;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(TICK) => {}
            }
            let commits = state.commits.load(Ordering::Relaxed);
            if commits != seen {
                (seen, last_commit, truncated) = (commits, Instant::now(), false);
            }
            let size = wal_size(&wal);
            let mode = if size > GROWN {
                "PASSIVE"
            } else if !truncated && size > 0 && last_commit.elapsed() >= QUIET {
                "TRUNCATE"
            } else {
                continue;
            };
            let outcome = checkpoint(&pool, mode).await;
            truncated = mode == "TRUNCATE" && outcome.is_ok();
            state.record(outcome);
        }
    });
    guard
}

/// Runs one checkpoint.
pub(super) async fn checkpoint(pool: &SqlitePool, mode: &str) -> Result<(), sqlx::Error> {
    sqlx::query(&format!("PRAGMA wal_checkpoint({mode})"))
        .execute(pool)
        .await
        .map(drop)
}
