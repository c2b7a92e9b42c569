//! How the embedded backend learns of credentials that ended in another process.
//!
//! Sign-outs and deleted share links happen in the serving process, which closes what
//! relied on them itself; the one change another process makes is `tandem users revoke`
//! from the shell. SQLite has no notifications between processes, so the store watches
//! the `users` table: every [`POLL`] it reads the revoked users' ids (a handful of rows
//! on the read pool) and announces each new one as [`Ending::UserRevoked`].

use std::collections::HashSet;
use std::time::Duration;

use sqlx::{SqliteConnection, SqlitePool};
use tokio::sync::mpsc;

use crate::domain::UserId;
use crate::store::{Change, Ending, StoreError};

/// How often the `users` table is read: a revoked user's sockets close within this.
pub const POLL: Duration = Duration::from_millis(200);

/// Nothing to tell inside the transaction: no other process serves this file (the log's
/// mark keeps a second server out), and [`watch`] finds revocations from the shell.
/// What this process must hear, [`super::announcer`] tells after the commit.
pub(super) async fn announce(_: &mut SqliteConnection, _: &Change) -> Result<(), StoreError> {
    Ok(())
}

/// Starts watching, telling `changes`; the task ends when its receiver is dropped.
pub(super) async fn watch(
    reads: SqlitePool,
    changes: mpsc::UnboundedSender<Change>,
) -> Result<(), StoreError> {
    let mut known = revoked(&reads).await?;
    tokio::spawn(async move {
        let mut tick = crate::lifecycle::steady_interval(POLL);
        loop {
            tokio::select! {
                _ = changes.closed() => return,
                _ = tick.tick() => {}
            }
            let now = match revoked(&reads).await {
                Ok(now) => now,
                Err(error) => {
                    tracing::warn!(%error, "cannot read revoked users; trying again");
                    continue;
                }
            };
            for user in now.difference(&known) {
                if changes
                    .send(Change::Ended(Ending::UserRevoked(*user)))
                    .is_err()
                {
                    return;
                }
            }
            known = now;
        }
    });
    Ok(())
}

/// The ids of every revoked user.
async fn revoked(reads: &SqlitePool) -> Result<HashSet<UserId>, StoreError> {
    let rows: Vec<(String,)> = sqlx::query_as("SELECT id FROM users WHERE revoked_at IS NOT NULL")
        .fetch_all(reads)
        .await?;
    rows.iter()
        .map(|(id,)| UserId::parse(id).map_err(|e| StoreError::Corrupt(e.to_string())))
        .collect()
}
