//! Webhooks when a session starts waiting for a person: a JSON POST to each configured
//! URL, signed with HMAC-SHA256, delivered at least once from the database's outbox
//! ([`crate::store::WebhookOutbox`]), retried with backoff, visible per session in the API.
//!
//! The deliverer adds the deliveries owed (one per pending interrupt and URL, derived from
//! rows written with the event that made the session wait) every [`TICK`], then attempts
//! the due ones. A delivery keeps its id across attempts and restarts, so a receiver can
//! drop repeats. Several instances may each attempt a due delivery once: at least once,
//! not exactly once.

mod deliver;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use deliver::{signature, SIGNATURE_HEADER};

use crate::domain::now_ms;
use crate::store::{Store, Target};

/// How often the outbox is looked at.
pub const TICK: Duration = Duration::from_millis(250);
/// Deliveries attempted per look at most.
const BATCH: u32 = 32;
/// How far back a waiting session is still announced when the deliverer starts.
const LOOK_BACK: Duration = Duration::from_secs(24 * 3600);
/// The longest wait between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Where and how to deliver.
#[derive(Clone)]
pub struct WebhookConfig {
    pub targets: Vec<Target>,
    /// The HMAC key (the secret file's bytes, trimmed).
    pub secret: Arc<[u8]>,
    /// The page's address, for links in the body (`https://tandem.example.com`).
    pub public_url: String,
    /// How long one attempt may take.
    pub timeout: Duration,
    /// The wait after the first failure; each later one doubles it (up to 5 min).
    pub retry_base: Duration,
    /// Attempts before a delivery is given up (`failed`).
    pub max_attempts: u32,
}

impl WebhookConfig {
    /// A target per URL; its key (in delivery ids) is a hash of the URL.
    pub fn targets(urls: &[String]) -> Vec<Target> {
        use sha2::Digest;
        urls.iter()
            .map(|url| {
                let hash = sha2::Sha256::digest(url.as_bytes());
                let key = hash[..8].iter().map(|b| format!("{b:02x}")).collect();
                Target {
                    url: url.clone(),
                    key,
                }
            })
            .collect()
    }

    /// The wait before attempt `attempts + 1`, after `attempts` failures.
    fn backoff(&self, attempts: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempts.saturating_sub(1).min(16));
        self.retry_base.saturating_mul(factor).min(MAX_BACKOFF)
    }
}

/// Starts the deliverer; it runs until `shutdown`.
pub fn spawn<S: Store>(store: Arc<S>, config: WebhookConfig, shutdown: CancellationToken) {
    let client = reqwest::Client::builder()
        .timeout(config.timeout)
        .build()
        .expect("an HTTP client with a timeout builds");
    let since = now_ms() - LOOK_BACK.as_millis() as i64;
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            if let Err(error) = round(&*store, &client, &config, since).await {
                tracing::warn!(%error, "webhook deliveries failed this round; retrying");
            }
        }
    });
}

/// Adds what is owed and attempts what is due.
async fn round<S: Store>(
    store: &S,
    client: &reqwest::Client,
    config: &WebhookConfig,
    since: i64,
) -> Result<(), crate::store::StoreError> {
    store
        .enqueue_webhooks(&config.targets, since, now_ms())
        .await?;
    for row in store.due_webhooks(now_ms(), BATCH).await? {
        let title = store.session(row.session).await?.map(|s| s.title);
        let attempt = deliver::attempt(client, config, &row, title.as_deref()).await;
        store.record_webhook(&row.id, &attempt, now_ms()).await?;
    }
    Ok(())
}
