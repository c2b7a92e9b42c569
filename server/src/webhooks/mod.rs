//! Webhooks when a session starts waiting for a person (and, with `--webhook-events
//! run-ended`, when a run ends): a JSON POST to each configured URL, signed with
//! HMAC-SHA256, delivered at least once from the database's outbox
//! ([`crate::store::WebhookOutbox`]), retried with backoff, visible per session in the API.
//!
//! The deliverer ([`deliverer`]) adds the deliveries owed (derived from rows written with
//! the event they announce) every [`TICK`], claims the due ones and attempts each in a
//! task of its own, at most [`CONCURRENT`] at once, so a receiver that hangs delays only
//! its own deliveries. A delivery keeps its id across attempts and restarts, so a receiver
//! can drop repeats; a claim keeps other instances off a delivery while it is attempted.
//! At least once, not exactly once: an instance that dies after a receiver answered but
//! before recording it leaves the delivery to be attempted again.

mod deliver;
mod deliverer;
mod settings;

use std::sync::Arc;
use std::time::Duration;

pub use deliver::{signature, SIGNATURE_HEADER};
pub use deliverer::spawn;
pub use settings::{configured, WebhookError};

use crate::store::{Target, Wanted};

/// How often the outbox is looked at.
pub const TICK: Duration = Duration::from_millis(250);
/// Attempts under way at once at most.
pub const CONCURRENT: usize = 16;
/// The longest wait between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Where and how to deliver.
#[derive(Clone)]
pub struct WebhookConfig {
    pub targets: Vec<Target>,
    /// What is announced.
    pub events: Wanted,
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

    /// The wait before attempt `attempts + 1`, after `attempts` failures: the base,
    /// doubled after each failure but the first, at most [`MAX_BACKOFF`].
    fn backoff(&self, attempts: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempts.saturating_sub(1).min(16));
        self.retry_base.saturating_mul(factor).min(MAX_BACKOFF)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(retry_base: Duration) -> WebhookConfig {
        WebhookConfig {
            targets: Vec::new(),
            events: Wanted::default(),
            secret: Arc::from(&b"s"[..]),
            public_url: "http://127.0.0.1:8080".into(),
            timeout: Duration::from_secs(1),
            retry_base,
            max_attempts: 12,
        }
    }

    #[test]
    fn backoff_doubles_from_the_base_up_to_five_minutes() {
        let doubling = config(Duration::from_secs(1));
        let waits: Vec<u64> = (1..=11).map(|n| doubling.backoff(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
        assert_eq!(doubling.backoff(u32::MAX), MAX_BACKOFF, "no overflow");
        let zero = config(Duration::ZERO);
        assert_eq!(zero.backoff(3), Duration::ZERO);
    }
}
