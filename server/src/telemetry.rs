//! Logging: `tracing` to stderr, filtered by `RUST_LOG` (default `info`), as text for a
//! person or as one JSON object per line (`--log-format json`) for a log pipeline.
//!
//! A run's work happens inside a `run` span with its `session` and `run` ids, and a
//! socket's inside a `socket` span with its `session`; the JSON format puts the fields of
//! every enclosing span on the line itself, so each line about a session says which.

mod client_mistakes;
mod json;

use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

pub use crate::config::LogFormat;

pub use client_mistakes::{client_mistake, WARNINGS_PER_MINUTE};

/// The message a caught panic carried (`panic!("…")`), for the log.
pub fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// Installs the global text subscriber; a second call is a no-op (tests start many apps).
pub fn init(default_filter: &str) {
    init_with(default_filter, LogFormat::Text);
}

/// Installs the global subscriber in `format`; a second call is a no-op.
pub fn init_with(default_filter: &str, format: LogFormat) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let not_ours = filter_fn(|metadata| !client_mistakes::logged_by_tandem_instead(metadata));
    let _ = match format {
        LogFormat::Text => builder.finish().with(not_ours).try_init(),
        LogFormat::Json => builder
            .fmt_fields(tracing_subscriber::fmt::format::JsonFields::new())
            .event_format(json::Flat)
            .finish()
            .with(not_ours)
            .try_init(),
    };
}
