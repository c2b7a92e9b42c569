//! The change feed: one `LISTEN tandem_log` connection per instance, its notifications
//! parsed into [`Change`]s. When the connection drops, the feed says
//! [`Change::Missed`] (whatever was announced meanwhile is lost) and listens again.
//! Appends this instance's own writers announced are left out (its hub has them already,
//! as on SQLite, which never announces appends); a stop among them is kept.
//! [`announce`] sends one change from inside the transaction that makes it.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use sqlx::PgConnection;
use tokio::sync::mpsc;

use super::writer_connection::WriterBackends;
use super::CHANGES_CHANNEL;
use crate::store::{Change, StoreError};

/// The name the listener's connection shows in `pg_stat_activity`.
pub const LISTENER_NAME: &str = "tandem-listener";

/// Starts listening; the task ends when the receiver is dropped. `own_writers` holds the
/// process ids of this instance's writer connections' backends.
pub(super) async fn listen(
    options: PgConnectOptions,
    own_writers: Arc<WriterBackends>,
) -> Result<mpsc::UnboundedReceiver<Change>, StoreError> {
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .connect_lazy_with(options.application_name(LISTENER_NAME));
    let mut listener = PgListener::connect_with(&pool).await?;
    listener.listen(CHANGES_CHANNEL).await?;
    let (changes, receiver) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut wait = Duration::from_millis(50);
        while !changes.is_closed() {
            let change = match listener.try_recv().await {
                Ok(Some(notification)) => {
                    wait = Duration::from_millis(50);
                    let Some(mut read) = Change::parse_many(notification.payload()) else {
                        tracing::warn!(
                            payload = notification.payload(),
                            "an unreadable change notice"
                        );
                        continue;
                    };
                    if own_writers.contains(notification.process_id()) {
                        read.retain(|change| !is_plain_append(change));
                    }
                    let Some(last) = read.pop() else { continue };
                    if read.into_iter().any(|change| changes.send(change).is_err()) {
                        break;
                    }
                    last
                }
                // The connection dropped; the next call connects and listens again.
                Ok(None) => {
                    tracing::warn!("the change feed's connection dropped; listening again");
                    Change::Missed
                }
                Err(error) => {
                    tracing::warn!(%error, retry_in_ms = wait.as_millis() as u64, "the change feed cannot listen");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(2));
                    Change::Missed
                }
            };
            if changes.send(change).is_err() {
                break;
            }
        }
    });
    Ok(receiver)
}

/// An append without a stop: what a hub already has when its own writer announced it.
fn is_plain_append(change: &Change) -> bool {
    matches!(change, Change::Appended { stop_run: None, .. })
}

/// Announces `change` to every instance; PostgreSQL delivers it when the transaction
/// `conn` is in commits (and never if it rolls back).
pub(super) async fn announce(conn: &mut PgConnection, change: &Change) -> Result<(), StoreError> {
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(CHANGES_CHANNEL)
        .bind(change.encode())
        .execute(conn)
        .await?;
    Ok(())
}
