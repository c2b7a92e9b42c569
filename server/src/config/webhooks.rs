//! Webhook settings: where to POST when a session starts waiting for a person (and what
//! else to announce), and the secret the deliveries are signed with.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

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
