//! Opening the store a database URL names: the one place that maps a URL scheme to a
//! backend. Callers hand over what to do with the store ([`UseStore`]) and stay generic
//! over [`Store`], so nothing outside `store/` knows which backend runs.

use std::sync::Arc;

use super::{PostgresStore, SqliteStore, Store, StoreError, StoreOptions};

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
