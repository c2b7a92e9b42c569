//! Webhook settings: where to POST when a session starts waiting for a person, and the
//! secret the deliveries are signed with.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::webhooks::WebhookConfig;

/// Webhooks (off without a URL).
#[derive(Debug, Clone, Args)]
pub struct WebhookArgs {
    /// URLs to POST to when a session starts waiting for a person (comma-separated).
    #[arg(
        long = "webhook-url",
        env = "TANDEM_WEBHOOK_URLS",
        value_delimiter = ','
    )]
    pub webhook_urls: Vec<String>,
    /// A file holding the secret that signs each delivery (HMAC-SHA256); required with
    /// `--webhook-url`.
    #[arg(long, env = "TANDEM_WEBHOOK_SECRET_FILE")]
    pub webhook_secret_file: Option<PathBuf>,
    /// The page's address people open, for the link in each delivery (default:
    /// `http://` and the address Tandem listens on).
    #[arg(long, env = "TANDEM_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// How long one delivery attempt may take, in ms.
    #[arg(long, env = "TANDEM_WEBHOOK_TIMEOUT_MS", default_value_t = 10_000)]
    pub webhook_timeout_ms: u64,
    /// The wait after a failed attempt, in ms; it doubles after each (up to 5 minutes).
    #[arg(long, env = "TANDEM_WEBHOOK_RETRY_MS", default_value_t = 1_000)]
    pub webhook_retry_ms: u64,
    /// Attempts before a delivery is given up.
    #[arg(long, env = "TANDEM_WEBHOOK_MAX_ATTEMPTS", default_value_t = 12)]
    pub webhook_max_attempts: u32,
}

/// A webhook setting that cannot work.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("--webhook-url `{0}` is not an http(s) URL")]
    Url(String),
    #[error("--webhook-url needs --webhook-secret-file (TANDEM_WEBHOOK_SECRET_FILE): a file with the secret receivers check signatures with")]
    NoSecret,
    #[error("cannot read the webhook secret file {path}: {reason}")]
    Secret { path: String, reason: String },
}

impl WebhookArgs {
    /// The deliverer's settings, `None` without a URL; `listening` is the address Tandem
    /// listens on (the default for links).
    pub fn config(&self, listening: &str) -> Result<Option<WebhookConfig>, WebhookError> {
        let urls: Vec<String> = self
            .webhook_urls
            .iter()
            .map(|u| u.trim().to_string())
            .filter(|u| !u.is_empty())
            .collect();
        if urls.is_empty() {
            return Ok(None);
        }
        if let Some(bad) = urls
            .iter()
            .find(|u| !u.starts_with("http://") && !u.starts_with("https://"))
        {
            return Err(WebhookError::Url(bad.clone()));
        }
        let path = self
            .webhook_secret_file
            .as_ref()
            .ok_or(WebhookError::NoSecret)?;
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| WebhookError::Secret {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        let secret = text.trim();
        if secret.is_empty() {
            return Err(WebhookError::Secret {
                path: shown,
                reason: "it is empty".into(),
            });
        }
        Ok(Some(WebhookConfig {
            targets: WebhookConfig::targets(&urls),
            secret: Arc::from(secret.as_bytes()),
            public_url: self
                .public_url
                .clone()
                .unwrap_or_else(|| format!("http://{listening}")),
            timeout: Duration::from_millis(self.webhook_timeout_ms.max(1)),
            retry_base: Duration::from_millis(self.webhook_retry_ms),
            max_attempts: self.webhook_max_attempts.max(1),
        }))
    }
}
