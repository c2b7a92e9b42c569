//! Webhook settings: where to POST when a session starts waiting for a person (and what
//! else to announce), and the secret the deliveries are signed with.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::store::Wanted;
use crate::webhooks::WebhookConfig;

/// What a webhook announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WebhookEvent {
    /// A session starts waiting for a person: a question or an approval
    /// (`session.waiting`).
    Waiting,
    /// A session starts waiting for an AG-UI client's own tools, which is no person
    /// (`session.waiting` with the interrupt's reason `client_tools`).
    ClientTools,
    /// A run ends: finished, paused, stopped or failed (`run.ended`).
    RunEnded,
    /// A person rates an answer (`feedback`).
    Feedback,
}

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
    /// What is announced (comma-separated): `waiting` (a person is needed), `client-tools`
    /// (an AG-UI client's own tools are awaited), `run-ended`, `feedback` (a person rated
    /// an answer).
    #[arg(
        long,
        env = "TANDEM_WEBHOOK_EVENTS",
        value_enum,
        value_delimiter = ',',
        default_value = "waiting"
    )]
    pub webhook_events: Vec<WebhookEvent>,
    /// A file holding the secret that signs each delivery (HMAC-SHA256); required with
    /// `--webhook-url`.
    #[arg(long, env = "TANDEM_WEBHOOK_SECRET_FILE")]
    pub webhook_secret_file: Option<PathBuf>,
    /// The page's address people open, for the link in each delivery (default:
    /// `http://` and the address Tandem listens on; required when that is a wildcard
    /// such as `0.0.0.0`).
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
    #[error("--webhook-url `{0}…` is not an http(s) URL")]
    Url(String),
    #[error("--webhook-url needs --public-url (TANDEM_PUBLIC_URL) when Tandem listens on a wildcard address ({0}): deliveries link to the page, and http://{0} is no address to open")]
    PublicUrl(String),
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
            // Only the start of it: the rest may be a secret.
            let start: String = bad.chars().take(8).collect();
            return Err(WebhookError::Url(start));
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
        let public_url = match &self.public_url {
            Some(url) => url.clone(),
            None if is_wildcard(listening) => {
                return Err(WebhookError::PublicUrl(listening.to_string()))
            }
            None => format!("http://{listening}"),
        };
        Ok(Some(WebhookConfig {
            targets: WebhookConfig::targets(&urls),
            events: self.wanted(),
            secret: Arc::from(secret.as_bytes()),
            public_url,
            timeout: Duration::from_millis(self.webhook_timeout_ms.max(1)),
            retry_base: Duration::from_millis(self.webhook_retry_ms),
            max_attempts: self.webhook_max_attempts.max(1),
        }))
    }
}

impl WebhookArgs {
    /// What the deliverer announces.
    fn wanted(&self) -> Wanted {
        let has = |event| self.webhook_events.contains(&event);
        Wanted {
            waiting: has(WebhookEvent::Waiting),
            client_tools: has(WebhookEvent::ClientTools),
            run_ends: has(WebhookEvent::RunEnded),
            feedback: has(WebhookEvent::Feedback),
        }
    }
}

/// Whether `listening` (`host:port`) is a wildcard address (`0.0.0.0`, `[::]`).
fn is_wildcard(listening: &str) -> bool {
    listening
        .parse::<std::net::SocketAddr>()
        .is_ok_and(|address| address.ip().is_unspecified())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        webhooks: WebhookArgs,
    }

    fn args(extra: &[&str]) -> (WebhookArgs, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "s3cr3t\n").unwrap();
        let mut all = vec!["t", "--webhook-url", "https://hooks.example.com/t/abc"];
        all.extend(["--webhook-secret-file", secret.to_str().unwrap()]);
        all.extend_from_slice(extra);
        (Flags::parse_from(all).webhooks, dir)
    }

    #[test]
    fn waiting_is_announced_unless_told_otherwise() {
        let (plain, _dir) = args(&[]);
        let config = plain.config("127.0.0.1:8080").unwrap().unwrap();
        let person = Wanted {
            waiting: true,
            ..Wanted::default()
        };
        assert_eq!(config.events, person);
        assert_eq!(config.public_url, "http://127.0.0.1:8080");
        let (all, _dir) = args(&["--webhook-events", "waiting,client-tools,run-ended"]);
        let events = all.config("127.0.0.1:8080").unwrap().unwrap().events;
        assert!(events.waiting && events.client_tools && events.run_ends);
    }

    #[test]
    fn a_wildcard_address_needs_a_public_url() {
        let (plain, _dir) = args(&[]);
        for wildcard in ["0.0.0.0:8080", "[::]:8080"] {
            let error = plain.config(wildcard).err().expect("refused");
            assert!(error.to_string().contains("--public-url"), "{error}");
        }
        let (public, _dir) = args(&["--public-url", "https://tandem.example.com"]);
        let config = public.config("0.0.0.0:8080").unwrap().unwrap();
        assert_eq!(config.public_url, "https://tandem.example.com");
    }

    #[test]
    fn a_bad_url_is_not_repeated_whole() {
        let (mut bad, _dir) = args(&[]);
        bad.webhook_urls = vec!["ftp://user:hunter2@example.com".into()];
        let error = bad.config("127.0.0.1:8080").err().expect("refused");
        assert!(!error.to_string().contains("hunter2"), "{error}");
    }
}
