//! The log writer's own connection. The writer is the only caller of
//! [`EventLog::apply`](crate::store::EventLog::apply) and sends one batch at a time, so it
//! keeps one connection rather than taking one from the pool for each batch: the pool
//! checks a connection with a round trip when it hands it out and again when it comes
//! back, which on the token path would triple the round trips of a commit.
//!
//! A connection comes back only from a batch that succeeded; one that failed (or whose
//! batch was dropped halfway) is closed, and the next batch connects afresh.
//!
//! Its backend's process id is kept for the change feed: a notice this connection sent
//! announces rows this instance's writer has already handed its hub, so the relay need
//! not read them back ([`super::feed`]).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::ConnectOptions;

use crate::store::StoreError;

/// The writer's connection while it is idle, and how to make a new one.
pub(super) struct WriterConnection {
    idle: Mutex<Option<PgConnection>>,
    options: PgConnectOptions,
    /// How long connecting may take before the database counts as unavailable.
    connect_timeout: Duration,
    /// The process id of the newest connection's backend (0 before the first).
    backend: Arc<AtomicU32>,
}

impl WriterConnection {
    /// No connection yet: the first batch connects.
    pub(super) fn new(options: PgConnectOptions, connect_timeout: Duration) -> Self {
        Self {
            idle: Mutex::new(None),
            options,
            connect_timeout,
            backend: Arc::default(),
        }
    }

    /// Where the process id of the writer's backend is kept, for the change feed.
    pub(super) fn backend(&self) -> Arc<AtomicU32> {
        self.backend.clone()
    }

    /// The idle connection, or a new one. Whoever takes it owns it until
    /// [`Self::give_back`]; two callers at once (tests) each get their own.
    pub(super) async fn take(&self) -> Result<PgConnection, StoreError> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(conn) = idle {
            return Ok(conn);
        }
        let connecting = async {
            let mut conn = self.options.connect().await?;
            let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
                .fetch_one(&mut conn)
                .await?;
            self.backend.store(pid as u32, Ordering::Relaxed);
            Ok::<_, StoreError>(conn)
        };
        match tokio::time::timeout(self.connect_timeout, connecting).await {
            Ok(connected) => connected,
            Err(_) => Err(StoreError::Unavailable(format!(
                "no connection to the database within {} ms",
                self.connect_timeout.as_millis()
            ))),
        }
    }

    /// Keeps `conn` for the next batch (after one that succeeded).
    pub(super) fn give_back(&self, conn: PgConnection) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.is_none() {
            *idle = Some(conn);
        }
    }
}
