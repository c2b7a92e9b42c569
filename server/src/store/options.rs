//! How the store behaves, whichever backend opens it: plain values every backend reads
//! when it connects, built from the settings ([`StoreOptions::configured`]). A leaf of the
//! store: it imports nothing of it.

use std::time::Duration;

/// How the store behaves, whichever backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// How long a write waits for a lock another process (or instance) holds.
    pub lock_timeout: Duration,
    /// How long a run lease lasts without renewal.
    pub run_lease: Duration,
    /// A name this instance keeps across restarts (unique among live instances): a
    /// restarted instance then takes its runs back at once instead of after the lease.
    pub instance_name: Option<String>,
    /// How many log writers commit at once where the database takes several (PostgreSQL),
    /// each on its own connection; a session's writes always go through the same one.
    pub log_writers: usize,
}

pub use crate::config::DEFAULT_LOG_WRITERS;

impl StoreOptions {
    /// The options the settings give: lock timeout, run lease, instance name, writers.
    pub fn configured(config: &crate::config::Config) -> Self {
        Self {
            lock_timeout: Duration::from_millis(config.lock_timeout_ms),
            run_lease: Duration::from_millis(config.run_lease_ms),
            instance_name: config.instance_name.clone(),
            log_writers: config.log_writers,
        }
    }
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            lock_timeout: Duration::from_secs(5),
            run_lease: Duration::from_secs(10),
            instance_name: None,
            log_writers: DEFAULT_LOG_WRITERS,
        }
    }
}
