//! Opening the store a database URL names: the one place that maps a URL scheme to a
//! backend. Callers hand over what to do with the store ([`UseStore`]) and stay generic
//! over [`Store`], so nothing outside `store/` knows which backend runs.

use std::sync::Arc;
use std::time::Duration;

use super::{PostgresStore, SqliteStore, Store, StoreError};

/// The database backends Tandem can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `sqlite://path`: one embedded file (the default).
    Sqlite,
    /// `postgres://…` (or `postgresql://…`): a database any number of instances share.
    Postgres,
}

/// A database URL no backend takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unsupported database URL `{0}`: use sqlite://<path> or postgres://<user>@<host>/<database>"
)]
pub struct UnsupportedUrl(pub String);

impl Backend {
    /// The backend a database URL names.
    pub fn of(url: &str) -> Result<Self, UnsupportedUrl> {
        if url.starts_with("sqlite:") {
            Ok(Self::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Self::Postgres)
        } else {
            Err(UnsupportedUrl(url.to_string()))
        }
    }
}

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

/// Work to do with an open store, whichever backend it is.
pub trait UseStore {
    /// What the work gives back.
    type Output;

    /// Does the work with the store.
    fn with<S: Store>(self, store: Arc<S>) -> impl std::future::Future<Output = Self::Output>;
}

/// Opens (creating and migrating if needed) the database at `url` and hands it to `work`.
pub async fn open<W: UseStore>(
    url: &str,
    options: &StoreOptions,
    work: W,
) -> Result<W::Output, OpenError> {
    match Backend::of(url)? {
        Backend::Sqlite => {
            let store = SqliteStore::connect(url, options).await?;
            Ok(work.with(Arc::new(store)).await)
        }
        Backend::Postgres => {
            let store = PostgresStore::connect(url, options).await?;
            Ok(work.with(Arc::new(store)).await)
        }
    }
}

/// Why a store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Url(#[from] UnsupportedUrl),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_picks_the_backend() {
        assert_eq!(Backend::of("sqlite://data/t.db"), Ok(Backend::Sqlite));
        assert_eq!(Backend::of("sqlite::memory:"), Ok(Backend::Sqlite));
        assert_eq!(Backend::of("postgres://u@h/db"), Ok(Backend::Postgres));
        assert_eq!(Backend::of("postgresql://h/db"), Ok(Backend::Postgres));
        let error = Backend::of("mysql://x").unwrap_err().to_string();
        assert!(error.contains("use sqlite://"), "{error}");
    }
}
