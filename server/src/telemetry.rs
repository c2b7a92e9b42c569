//! Logging: `tracing` to stderr, filtered by `RUST_LOG` (default `info`).

use tracing_subscriber::EnvFilter;

/// The message a caught panic carried (`panic!("…")`), for the log.
pub fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// Installs the global subscriber; a second call is a no-op (tests start many apps).
pub fn init(default_filter: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
