//! Opening the store a database URL names: the one place that maps a URL scheme to a
//! backend. Callers hand over what to do with the store ([`UseStore`]) and stay generic
//! over [`Store`], so nothing outside `store/` knows which backend runs.

use std::sync::Arc;
use std::time::Duration;

use super::{SqliteStore, Store, StoreError};

/// The database backends Tandem can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `sqlite://path`: one embedded file (the default).
    Sqlite,
}

/// A database URL no backend takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported database URL `{0}`: use sqlite://<path>")]
pub struct UnsupportedUrl(pub String);

impl Backend {
    /// The backend a database URL names.
    pub fn of(url: &str) -> Result<Self, UnsupportedUrl> {
        if url.starts_with("sqlite:") {
            Ok(Self::Sqlite)
        } else {
            Err(UnsupportedUrl(url.to_string()))
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
/// `busy_timeout` is how long a write waits for another process's lock.
pub async fn open<W: UseStore>(
    url: &str,
    busy_timeout: Duration,
    work: W,
) -> Result<W::Output, OpenError> {
    match Backend::of(url)? {
        Backend::Sqlite => {
            let store = SqliteStore::connect(url, busy_timeout).await?;
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
        let error = Backend::of("mysql://x").unwrap_err().to_string();
        assert!(error.contains("use sqlite://"), "{error}");
    }
}
