//! Opening a SQLite store: the file (private to its owner), the pragmas, the migrations,
//! and the connections: the log engine's own (the writer and replay's readers, rusqlite's
//! for their whole life, [`super::direct`]) and sqlx's (read-only readers and a small pool
//! for the other writes).

use std::str::FromStr;
use std::sync::Arc;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use tokio::sync::Mutex;

use super::checkpoints::{self, WalState};
use super::direct::{EngineOptions, Readers, WriterConnection};
use super::log::LogState;
use super::SqliteStore;
use crate::store::leases::LeaseTerms;
use crate::store::{StoreError, StoreOptions};

/// Read-only connections: replays of several sockets and REST reads at once (sqlx's for
/// the records, as many again of the engine's for replay).
const READERS: u32 = 8;
/// Connections for the writes outside the log writer.
const OTHER_WRITERS: u32 = 2;
/// The writer's page cache, in KiB (SQLite's negative `cache_size`): a commit touches the
/// end of the log's tail, and a fold one `events` leaf page of its session, so 1,000 live
/// sessions' pages fit with room to spare (SQLite's default 2 MiB did not). Every page
/// the writer writes passes through it, so it is what a busy writer holds: 64 MiB made a
/// single session streaming 100,000 events grow the process by 55 MiB.
const WRITER_CACHE_SIZE: i64 = -8192;

impl SqliteStore {
    /// Opens (creating if missing, with its folder) the database at `url` and migrates it.
    /// A write waits up to the options' lock timeout for a lock another process holds.
    pub async fn connect(url: &str, store_options: &StoreOptions) -> Result<Self, StoreError> {
        let busy_timeout = store_options.lock_timeout;
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(busy_timeout)
            // Checkpoints run off the commit path (`checkpoints`).
            .pragma("wal_autocheckpoint", "0")
            // A multi-row INSERT into the log keeps a statement journal (its foreign key
            // could fail it half-way); in memory, not in a temporary file it writes to
            // page by page (7 % of SQLite's thread in a burst).
            .pragma("temp_store", "memory");
        create_private(options.get_filename())
            .map_err(|e| StoreError::Corrupt(format!("cannot create the database file: {e}")))?;
        let pool = SqlitePoolOptions::new()
            .max_connections(OTHER_WRITERS)
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("../migrations/sqlite").run(&pool).await?;
        // Opened after the migrations made the file and its WAL.
        let reads = SqlitePoolOptions::new()
            .max_connections(READERS)
            .connect_with(options.clone().read_only(true))
            .await?;
        let engine = EngineOptions {
            path: options.get_filename().to_path_buf(),
            busy_timeout,
            writer_cache_size: WRITER_CACHE_SIZE,
        };
        let mut writer = super::direct::blocking(|| WriterConnection::open(&engine))?;
        // Rows a previous process left in the log's tail move to `events` before anything
        // reads the log (this store's memory of the tail starts empty).
        writer.with(LogState::fold_at_open)?;
        let writer = Arc::new(Mutex::new(writer));
        let replay = Arc::new(Readers::new(engine, READERS as usize));
        let wal_path = wal_path_of(options.get_filename());
        let wal = Arc::new(WalState::default());
        let checkpointer = checkpoints::spawn(pool.clone(), wal_path.clone(), wal.clone());
        let lease = LeaseTerms::new(
            store_options.run_lease,
            store_options.instance_name.as_deref(),
        );
        Ok(Self {
            pool,
            reads,
            writer,
            replay,
            lease,
            log: Arc::new(LogState::default()),
            wal,
            wal_path,
            announcer: Default::default(),
            _checkpointer: Arc::new(checkpointer),
        })
    }

    /// Closes every connection of this store (a tool that hands the file on); clones
    /// keep the engine's connections open until the last one is dropped.
    pub async fn close(self) {
        self.pool.close().await;
        self.reads.close().await;
    }
}

/// Creates the database file (and its folder) readable by the owner only, if missing.
/// SQLite gives its `-wal` and `-shm` files the database file's permissions.
fn create_private(file: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if file.as_os_str().is_empty() || file.as_os_str() == ":memory:" {
        return Ok(());
    }
    if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)?;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
    {
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other.map(drop),
    }
}

/// The WAL file beside the database file.
fn wal_path_of(file: &std::path::Path) -> std::path::PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push("-wal");
    name.into()
}
