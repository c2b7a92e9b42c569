//! Files and images in the conversation: what an upload's bytes are ([`media`]), an
//! upload as it streams into the store ([`upload`]) and a file fetched from a listed origin
//! ([`fetch`]). The store keeps them
//! (`store::Attachments`); the routes are in `routes/attachments.rs`.

pub mod fetch;
pub mod media;
pub mod upload;

pub use upload::{Upload, UploadError, UploadLimits};

/// How often abandoned uploads and blobs no attachment refers to are purged, at most.
pub const PURGE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);
/// How long a finished blob may go without an attachment before it goes (the moment
/// between an upload's finish and its attachment's commit, and a little more).
pub const UNREFERENCED_AFTER_MS: i64 = 60 * 1000;

/// Purges, until the process stops, the blobs no attachment refers to any more (their
/// sessions were deleted) and the uploads a crash or a cut connection left unfinished,
/// once they stopped moving for `stalled_after` (every quarter of that, at most every
/// [`PURGE_EVERY`]).
pub fn spawn_purger<S: crate::store::Store>(
    store: std::sync::Arc<S>,
    stalled_after: std::time::Duration,
    lifecycle: &crate::lifecycle::Lifecycle,
) {
    let stop = lifecycle.halting().clone();
    let stalled_ms = stalled_after.as_millis() as i64;
    lifecycle.spawn(async move {
        let mut tick = crate::lifecycle::steady_interval((stalled_after / 4).min(PURGE_EVERY));
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            let now = crate::domain::now_ms();
            let purged = store
                .purge_blobs(now - UNREFERENCED_AFTER_MS, now - stalled_ms)
                .await;
            match purged {
                Ok(0) => {}
                Ok(purged) => tracing::info!(purged, "purged attachments nothing refers to"),
                Err(error) => tracing::warn!(%error, "could not purge attachments; retrying later"),
            }
        }
    });
}
