//! The deliverer's settings, built from the webhook flags ([`WebhookArgs`]): where to POST,
//! what to announce, the signing secret, and the links' public URL.

use std::sync::Arc;
use std::time::Duration;

use super::WebhookConfig;
use crate::config::{WebhookArgs, WebhookEvent};
use crate::store::Wanted;

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

/// The deliverer's settings from the webhook flags, `None` without a URL; `listening` is
/// the address Tandem listens on (the default for links).
pub fn configured(
    args: &WebhookArgs,
    listening: &str,
) -> Result<Option<WebhookConfig>, WebhookError> {
    let urls: Vec<String> = args
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
    let path = args
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
    let public_url = match &args.public_url {
        Some(url) => url.clone(),
        None if is_wildcard(listening) => {
            return Err(WebhookError::PublicUrl(listening.to_string()))
        }
        None => format!("http://{listening}"),
    };
    Ok(Some(WebhookConfig {
        targets: WebhookConfig::targets(&urls),
        events: wanted(args),
        secret: Arc::from(secret.as_bytes()),
        public_url,
        timeout: Duration::from_millis(args.webhook_timeout_ms.max(1)),
        retry_base: Duration::from_millis(args.webhook_retry_ms),
        max_attempts: args.webhook_max_attempts.max(1),
    }))
}

/// What the deliverer announces.
fn wanted(args: &WebhookArgs) -> Wanted {
    let has = |event| args.webhook_events.contains(&event);
    Wanted {
        waiting: has(WebhookEvent::Waiting),
        client_tools: has(WebhookEvent::ClientTools),
        run_ends: has(WebhookEvent::RunEnded),
        feedback: has(WebhookEvent::Feedback),
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
        let config = configured(&plain, "127.0.0.1:8080").unwrap().unwrap();
        let person = Wanted {
            waiting: true,
            ..Wanted::default()
        };
        assert_eq!(config.events, person);
        assert_eq!(config.public_url, "http://127.0.0.1:8080");
        let (all, _dir) = args(&["--webhook-events", "waiting,client-tools,run-ended"]);
        let events = configured(&all, "127.0.0.1:8080").unwrap().unwrap().events;
        assert!(events.waiting && events.client_tools && events.run_ends);
    }

    #[test]
    fn a_wildcard_address_needs_a_public_url() {
        let (plain, _dir) = args(&[]);
        for wildcard in ["0.0.0.0:8080", "[::]:8080"] {
            let error = configured(&plain, wildcard).err().expect("refused");
            assert!(error.to_string().contains("--public-url"), "{error}");
        }
        let (public, _dir) = args(&["--public-url", "https://tandem.example.com"]);
        let config = configured(&public, "0.0.0.0:8080").unwrap().unwrap();
        assert_eq!(config.public_url, "https://tandem.example.com");
    }

    #[test]
    fn a_bad_url_is_not_repeated_whole() {
        let (mut bad, _dir) = args(&[]);
        bad.webhook_urls = vec!["ftp://user:hunter2@example.com".into()];
        let error = configured(&bad, "127.0.0.1:8080").err().expect("refused");
        assert!(!error.to_string().contains("hunter2"), "{error}");
    }
}
