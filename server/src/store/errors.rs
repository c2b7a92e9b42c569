//! Storage failures, in terms every backend shares: the writer retries what is
//! [`StoreError::is_transient`] and gives up on the rest, without knowing which database
//! runs. A leaf: it knows no backend; each backend classifies its own error codes
//! (`from_sqlx.rs` asks them).

/// A storage failure (the database, not the caller, is at fault).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database is busy or locked, unreachable, or out of free connections: retrying
    /// may succeed once that clears.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// The disk or the database is full: retrying succeeds once space is freed.
    #[error("database full: {0}")]
    Full(String),
    /// Another writer appended to a session at the seqs this write was given (a head
    /// this instance knew had fallen behind): nothing of the write was committed, and
    /// writing it again, after reading the heads afresh, succeeds.
    #[error("seq already taken: {0}")]
    SeqTaken(String),
    /// Anything else the database reported; retrying will not help.
    #[error("database error: {0}")]
    Database(String),
    #[error("migration failed: {0}")]
    Migrate(String),
    #[error("corrupt row: {0}")]
    Corrupt(String),
}

/// How a backend sees one of its database's errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Unavailable,
    Full,
    /// A seq another writer took ([`StoreError::SeqTaken`]).
    SeqTaken,
    Fatal,
}

impl StoreError {
    /// Whether retrying may succeed once the condition clears.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Unavailable(_) | Self::Full(_) | Self::SeqTaken(_)
        )
    }

    /// The error of `kind` with `message`.
    pub fn of_kind(kind: ErrorKind, message: String) -> Self {
        match kind {
            ErrorKind::Unavailable => Self::Unavailable(message),
            ErrorKind::Full => Self::Full(message),
            ErrorKind::SeqTaken => Self::SeqTaken(message),
            ErrorKind::Fatal => Self::Database(message),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(error: sqlx::migrate::MigrateError) -> Self {
        Self::Migrate(error.to_string())
    }
}
