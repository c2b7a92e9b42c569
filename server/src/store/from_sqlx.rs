//! sqlx's errors as [`StoreError`]s, for `?` in every backend: each backend classifies its
//! own database's codes ([`super::sqlite::classify`], [`super::postgres::classify`]), and
//! a failure that is no database's (a pool timed out or closed, I/O) may clear. Apart
//! from `errors.rs` so that the error type stays a leaf that knows no backend.

use super::errors::{ErrorKind, StoreError};

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        let kind = match &error {
            sqlx::Error::Database(database) => super::sqlite::classify(database.as_ref())
                .or_else(|| super::postgres::classify(database.as_ref()))
                .unwrap_or(ErrorKind::Fatal),
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
                ErrorKind::Unavailable
            }
            _ => ErrorKind::Fatal,
        };
        Self::of_kind(kind, error.to_string())
    }
}
