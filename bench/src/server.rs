//! The real app in-process (`Application::build_with`), on a runtime of its own so the
//! benchmark's clients do not share its threads: on SQLite (what ships) or on the
//! [`NoopStore`] (the same path without the log's SQL), or on PostgreSQL.
//!
//! The app uses the `bench` engine; each instance gets a fresh temporary database.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::ServerHandle;
use clap::Parser;
use tandem::store::{PostgresStore, SqliteStore, Store, StoreOptions};
use tandem::{Application, Config};
use tokio::runtime::Runtime;

use crate::noop_store::NoopStore;

/// How the app's `bench` engine streams.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// Tokens per model call.
    pub tokens: u64,
    /// Milliseconds between tokens (0 = as fast as the run takes them).
    pub delay_ms: u64,
}

/// A running in-process app.
pub struct InProcess {
    /// `host:port` it listens on.
    pub address: String,
    handle: ServerHandle,
    runtime: Runtime,
    _dir: tempfile::TempDir,
}

/// The store's options for PostgreSQL: the defaults, with `TANDEM_LOG_WRITERS` (as the
/// binary reads it) so that runs with one writer and with several alternate on one build.
pub fn postgres_options() -> StoreOptions {
    let writers = std::env::var("TANDEM_LOG_WRITERS").ok();
    StoreOptions {
        log_writers: writers
            .and_then(|count| count.parse().ok())
            .unwrap_or(tandem::store::DEFAULT_LOG_WRITERS),
        ..StoreOptions::default()
    }
}

impl InProcess {
    /// The app on a fresh SQLite file; also returns the store, for seeding and reading.
    pub fn on_sqlite(pace: Pace) -> anyhow::Result<(Self, Arc<SqliteStore>)> {
        let dir = tempfile::tempdir()?;
        let url = format!("sqlite://{}", dir.path().join("tandem.db").display());
        let runtime = app_runtime()?;
        let store = runtime.block_on(SqliteStore::connect(&url, &StoreOptions::default()))?;
        let store = Arc::new(store);
        let app = launch(runtime, dir, &url, pace, store.clone())?;
        Ok((app, store))
    }

    /// The app on a fresh SQLite file with more flags (they win over the benchmark's);
    /// also returns the store.
    pub fn on_sqlite_with(pace: Pace, extra: &[&str]) -> anyhow::Result<(Self, Arc<SqliteStore>)> {
        let dir = tempfile::tempdir()?;
        let url = format!("sqlite://{}", dir.path().join("tandem.db").display());
        let runtime = app_runtime()?;
        let store = runtime.block_on(SqliteStore::connect(&url, &StoreOptions::default()))?;
        let store = Arc::new(store);
        let app = launch_with(runtime, dir, &url, pace, store.clone(), extra)?;
        Ok((app, store))
    }

    /// The app on the PostgreSQL database at `url` (several may share one).
    pub fn on_postgres(pace: Pace, url: &str) -> anyhow::Result<(Self, Arc<PostgresStore>)> {
        let dir = tempfile::tempdir()?;
        let runtime = app_runtime()?;
        let store = runtime.block_on(PostgresStore::connect(url, &postgres_options()))?;
        let store = Arc::new(store);
        let app = launch(runtime, dir, url, pace, store.clone())?;
        Ok((app, store))
    }

    /// The app on a store whose log writes nothing, its records in a SQLite file in
    /// memory ([`in_memory_dir`]).
    pub fn on_noop(pace: Pace) -> anyhow::Result<Self> {
        let dir = in_memory_dir()?;
        let url = format!("sqlite://{}", dir.path().join("records.db").display());
        let runtime = app_runtime()?;
        let records = runtime.block_on(SqliteStore::connect(&url, &StoreOptions::default()))?;
        let store = Arc::new(NoopStore::new(records));
        launch(runtime, dir, &url, pace, store)
    }

    /// The app's runtime, to run tasks beside it (as its own would run).
    pub fn runtime_handle(&self) -> tokio::runtime::Handle {
        self.runtime.handle().clone()
    }

    /// Runs `future` on the app's runtime (seeding, reading the store).
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Stops the server and its runtime.
    pub fn stop(self) {
        self.runtime.block_on(self.handle.stop(false));
        self.runtime.shutdown_timeout(Duration::from_secs(2));
    }
}

/// A fresh folder in memory (`/dev/shm`) where the machine has one, else the usual
/// temporary one: the no-op store's records touch no disk either.
fn in_memory_dir() -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("tandem-bench-")
        .tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
}

/// One worker thread per core, as the binary's `#[tokio::main]` has.
fn app_runtime() -> anyhow::Result<Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("tandem-app")
        .build()?)
}

fn launch<S: Store>(
    runtime: Runtime,
    dir: tempfile::TempDir,
    url: &str,
    pace: Pace,
    store: Arc<S>,
) -> anyhow::Result<InProcess> {
    launch_with(runtime, dir, url, pace, store, &[])
}

fn launch_with<S: Store>(
    runtime: Runtime,
    dir: tempfile::TempDir,
    url: &str,
    pace: Pace,
    store: Arc<S>,
    extra: &[&str],
) -> anyhow::Result<InProcess> {
    let config = config(url, &dir, pace, extra);
    tandem::startup::check(&config)?;
    let (address, handle) = runtime.block_on(async move {
        let app = Application::build_with(config, store).await?;
        let address = app.address().to_string();
        let handle = app.handle();
        tokio::spawn(app.run_until_stopped());
        anyhow::Ok((address, handle))
    })?;
    Ok(InProcess {
        address,
        handle,
        runtime,
        _dir: dir,
    })
}

/// The per-user limits the benchmark lifts: it plays thousands of sessions of one user.
pub const UNLIMITED: &str = "10000000";

fn config(url: &str, dir: &tempfile::TempDir, pace: Pace, extra: &[&str]) -> Config {
    let workspace = dir.path().join("workspace");
    let tokens = pace.tokens.to_string();
    let delay = pace.delay_ms.to_string();
    Config::try_parse_from(
        [
            "tandem",
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            url,
            "--engine",
            "bench",
            "--bench-tokens",
            &tokens,
            "--token-delay-ms",
            &delay,
            "--web-dir",
            "/nonexistent",
            "--workspace-dir",
            workspace.to_str().unwrap_or("workspace"),
            "--sessions-per-minute",
            UNLIMITED,
            "--messages-per-minute",
            UNLIMITED,
            "--sockets-per-user",
            UNLIMITED,
            "--max-concurrent-runs",
            UNLIMITED,
            "--max-queued-runs",
            UNLIMITED,
        ]
        .into_iter()
        .chain(extra.iter().copied()),
    )
    .expect("the benchmark passes valid flags")
}
