//! The log engine's own connections, opened, driven and closed by rusqlite for their
//! whole life: the writer's one connection (batches, folds, checkpoints when the
//! checkpointer lags, creating and deleting sessions) and a few read-only connections
//! for replay. Every other connection of the store is sqlx's, also for its whole life;
//! no connection is ever shared between the two drivers.
//!
//! A connection's work runs on the calling thread (a batch is one hop, with rusqlite's
//! cache of prepared statements, and a replay steps rows straight into the socket's
//! buffer); on a multi-threaded runtime under [`tokio::task::block_in_place`], so the
//! runtime's other tasks move to another thread meanwhile.
//!
//! (The writer used to be sqlx's connection, locked with `lock_handle` and driven by
//! rusqlite through its raw handle. sqlx 0.8's `lock_handle` loses a wake-up now and then
//! — a loop of `lock_handle()` and drop on one idle connection hangs within thousands of
//! iterations, within dozens when two run at once — which hung the store's tests.)

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::Semaphore;

use crate::store::{ErrorKind, StoreError};

/// Prepared statements rusqlite keeps per connection (the writer's SQL comes in a few
/// dozen shapes: the multi-row statements have one per power of two).
const STATEMENT_CACHE: usize = 64;

/// Where and how the engine opens its connections.
#[derive(Debug, Clone)]
pub(super) struct EngineOptions {
    /// The database file (made, with its schema, by the store's migrations first).
    pub path: PathBuf,
    /// How long a statement waits for a lock another connection holds.
    pub busy_timeout: Duration,
    /// The writer's page cache (SQLite's `cache_size`: negative is KiB).
    pub writer_cache_size: i64,
}

impl EngineOptions {
    /// Opens the writer's connection, with the store's pragmas.
    fn open_writer(&self) -> Result<Connection, StoreError> {
        let conn = self.open(OpenFlags::SQLITE_OPEN_READ_WRITE)?;
        conn.execute_batch(&format!(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; \
             PRAGMA wal_autocheckpoint = 0; PRAGMA temp_store = MEMORY; \
             PRAGMA cache_size = {};",
            self.writer_cache_size
        ))?;
        Ok(conn)
    }

    /// Opens a read-only connection.
    fn open_reader(&self) -> Result<Connection, StoreError> {
        self.open(OpenFlags::SQLITE_OPEN_READ_ONLY)
    }

    /// Opens a connection in `mode` (read-write or read-only), with the busy timeout and
    /// the statement cache every engine connection has.
    fn open(&self, mode: OpenFlags) -> Result<Connection, StoreError> {
        let conn = Connection::open_with_flags(&self.path, mode | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        conn.busy_timeout(self.busy_timeout)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(conn)
    }
}

/// The log writer's connection.
pub(super) struct WriterConnection {
    conn: Connection,
    options: EngineOptions,
}

impl WriterConnection {
    /// Opens the writer's connection.
    pub fn open(options: &EngineOptions) -> Result<Self, StoreError> {
        Ok(Self {
            conn: options.open_writer()?,
            options: options.clone(),
        })
    }

    /// Runs `work` with the connection, on this thread.
    pub fn with<T>(
        &mut self,
        work: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let conn = &self.conn;
        blocking(|| work(conn))
    }

    /// Whether the connection still answers.
    pub fn answers(&self) -> bool {
        self.conn.query_row("SELECT 1", [], |_| Ok(())).is_ok()
    }

    /// Replaces a broken connection with a fresh one.
    pub fn reopen(&mut self) -> Result<(), StoreError> {
        self.conn = self.options.open_writer()?;
        Ok(())
    }
}

/// The engine's read-only connections: at most `limit` in use at once, opened as they
/// are first needed and kept. A `std::sync::Mutex`: held only to take or return one.
pub(super) struct Readers {
    idle: Mutex<Vec<Connection>>,
    permits: Semaphore,
    options: EngineOptions,
}

impl Readers {
    /// At most `limit` read-only connections.
    pub fn new(options: EngineOptions, limit: usize) -> Self {
        Self {
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(limit.max(1)),
            options,
        }
    }

    /// Runs `read` on a read-only connection, on this thread: a query's rows are stepped
    /// here, not sent one by one from another thread.
    pub async fn with<T>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| StoreError::Unavailable("the store is closed".into()))?;
        let idle = self.idle.lock().expect("readers lock poisoned").pop();
        let conn = match idle {
            Some(conn) => conn,
            None => blocking(|| self.options.open_reader())?,
        };
        let outcome = blocking(|| read(&conn));
        // A connection that failed may be broken: it is dropped, and the next read opens
        // a fresh one.
        if outcome.is_ok() {
            self.idle.lock().expect("readers lock poisoned").push(conn);
        }
        outcome
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

    use super::*;

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

    /// The loop that hung sqlx's `lock_handle` (a lost wake-up within thousands of
    /// iterations on one thread, dozens on two), on the engine's own connections: two
    /// threads, each its own runtime, taking the writer and a reader in turn.
    #[test]
    fn taking_the_engines_connections_in_a_tight_loop_never_hangs() {
        let dir = tempfile::tempdir().unwrap();
        let options = EngineOptions {
            path: dir.path().join("engine.db"),
            busy_timeout: Duration::from_secs(5),
            writer_cache_size: -2048,
        };
        Connection::open(&options.path)
            .unwrap()
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER)")
            .unwrap();
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let options = options.clone();
                std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    runtime.block_on(async {
                        let mut writer = WriterConnection::open(&options).unwrap();
                        let readers = Readers::new(options, 2);
                        for n in 0..5_000 {
                            writer
                                .with(|c| Ok(c.execute("INSERT INTO t VALUES (?)", [n])?))
                                .unwrap();
                            let read = readers.with(|c| {
                                Ok(c.query_row("SELECT count(*) FROM t", [], |r| {
                                    r.get::<_, i64>(0)
                                })?)
                            });
                            assert!(read.await.unwrap() > 0);
                        }
                    });
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
    }
}
