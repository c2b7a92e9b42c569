//! The log writer's connection, and one hop per batch.
//!
//! sqlx opens the connection (options, pragmas, the writer's page cache) and stays its
//! owner, but it runs each statement on its worker thread: one channel round trip per
//! statement, and a batch has several (BEGIN, the UPDATE, the INSERTs, COMMIT). Instead a
//! batch locks sqlx's handle once ([`sqlx::SqliteConnection::lock_handle`], which parks
//! sqlx's worker) and runs its whole transaction through `rusqlite` on that same SQLite
//! handle, on the writer's own thread, with rusqlite's cache of prepared statements.
//! On a multi-threaded runtime the blocking part runs under
//! [`tokio::task::block_in_place`], so the runtime's other tasks move to another thread
//! meanwhile.

use sqlx::{ConnectOptions, Connection, SqliteConnection};

use crate::store::{ErrorKind, StoreError};

/// Prepared statements rusqlite keeps (the writer's SQL comes in a few dozen shapes: the
/// multi-row statements have one per power of two).
const STATEMENT_CACHE: usize = 64;

/// The writer's connection: sqlx's, and rusqlite's view of the same handle.
pub(super) struct WriterConnection {
    /// rusqlite's view (its prepared statements); made at the first batch, dropped
    /// before `sqlx` closes the handle (by `close`, or by field order when dropped, while
    /// sqlx's worker is idle). Never closes the handle itself.
    direct: Option<rusqlite::Connection>,
    sqlx: SqliteConnection,
}

impl WriterConnection {
    /// Opens the writer's connection with `options`.
    pub async fn open(options: &sqlx::sqlite::SqliteConnectOptions) -> Result<Self, StoreError> {
        Ok(Self {
            direct: None,
            sqlx: options.connect().await?,
        })
    }

    /// The connection as sqlx's, for the writer's statements that are not a batch.
    pub fn sqlx(&mut self) -> &mut SqliteConnection {
        &mut self.sqlx
    }

    /// Runs `work` with the connection, on this thread, while sqlx's worker is parked.
    pub async fn with<T>(
        &mut self,
        work: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut handle = self.sqlx.lock_handle().await?;
        if self.direct.is_none() {
            // SAFETY: the handle is sqlx's open connection; rusqlite's `from_handle`
            // never closes it, and `direct` is dropped before sqlx closes it (`close`,
            // `Drop`). rusqlite only touches it here, while `handle` keeps sqlx's worker
            // parked, so the two never use it at once.
            let direct =
                unsafe { rusqlite::Connection::from_handle(handle.as_raw_handle().as_ptr()) }?;
            direct.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
            self.direct = Some(direct);
        }
        let direct = self.direct.as_ref().expect("made above");
        let outcome = blocking(|| work(direct));
        drop(handle);
        outcome
    }

    /// Closes the connection.
    pub async fn close(mut self) {
        self.forget_statements().await;
        let _ = self.sqlx.close().await;
    }

    /// Replaces a broken connection with a fresh one opened with `options`.
    pub async fn reopen(
        &mut self,
        options: &sqlx::sqlite::SqliteConnectOptions,
    ) -> Result<(), StoreError> {
        let fresh = options.connect().await?;
        self.forget_statements().await;
        let broken = std::mem::replace(&mut self.sqlx, fresh);
        let _ = broken.close().await;
        Ok(())
    }

    /// Finalises rusqlite's prepared statements (SQLite refuses to close a handle that
    /// still has some), with sqlx's worker parked.
    async fn forget_statements(&mut self) {
        if let Some(direct) = self.direct.take() {
            let handle = self.sqlx.lock_handle().await;
            drop(direct);
            drop(handle);
        }
    }
}

/// Runs blocking `work` on this thread, under `block_in_place` where the runtime allows.
pub(super) fn blocking<T>(work: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}

/// Runs `read` on a read-only connection of `pool` through rusqlite, on this thread: a
/// query's rows are stepped here, not sent one by one from sqlx's worker thread.
pub(super) async fn with_reader<T>(
    pool: &sqlx::SqlitePool,
    read: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let mut conn = pool.acquire().await?;
    let mut handle = conn.lock_handle().await?;
    // SAFETY: the handle is sqlx's open connection and `handle` keeps sqlx's worker
    // parked while rusqlite uses it; rusqlite's `from_handle` never closes it, and this
    // view (with its prepared statements) is dropped before the lock is released.
    let direct = unsafe { rusqlite::Connection::from_handle(handle.as_raw_handle().as_ptr()) }?;
    let outcome = blocking(|| read(&direct));
    drop(direct);
    drop(handle);
    outcome
}

/// How rusqlite's errors read for the writer, as [`super::classify`] reads sqlx's.
impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        let kind = match &error {
            rusqlite::Error::SqliteFailure(failure, _) => match failure.code {
                rusqlite::ErrorCode::DatabaseBusy
                | rusqlite::ErrorCode::DatabaseLocked
                | rusqlite::ErrorCode::SystemIoFailure => ErrorKind::Unavailable,
                rusqlite::ErrorCode::DiskFull => ErrorKind::Full,
                _ => ErrorKind::Fatal,
            },
            _ => ErrorKind::Fatal,
        };
        Self::of_kind(kind, error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::ffi;

    use crate::store::StoreError;

    fn from_code(code: i32) -> StoreError {
        rusqlite::Error::SqliteFailure(ffi::Error::new(code), None).into()
    }

    #[test]
    fn sqlite_codes_read_as_the_writer_expects() {
        for code in [
            ffi::SQLITE_BUSY,
            ffi::SQLITE_LOCKED,
            ffi::SQLITE_IOERR_WRITE,
        ] {
            let error = from_code(code);
            assert!(
                matches!(error, StoreError::Unavailable(_)),
                "{code}: {error}"
            );
            assert!(error.is_transient());
        }
        assert!(matches!(from_code(ffi::SQLITE_FULL), StoreError::Full(_)));
        let fatal = from_code(ffi::SQLITE_CONSTRAINT_PRIMARYKEY);
        assert!(matches!(fatal, StoreError::Database(_)), "{fatal}");
        assert!(!fatal.is_transient());
    }
}
