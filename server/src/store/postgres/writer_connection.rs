//! The log writers' own connections. Only the log writers call
//! [`EventLog::apply`](crate::store::EventLog::apply), each one batch at a time, so they
//! keep their connections rather than take one from the pool for each batch: the pool
//! checks a connection with a round trip when it hands it out and again when it comes
//! back, which on the token path would triple the round trips of a commit.
//!
//! A connection comes back only from a batch that succeeded; one that failed (or whose
//! batch was dropped halfway) is closed, and the next batch connects afresh. At most as
//! many as there are log writers stay idle.
//!
//! The process ids of their backends are kept for the change feed: a notice one of these
//! connections sent announces rows this instance's writers have already handed its hub,
//! so the relay need not read them back ([`super::feed`]). A connection's id leaves the
//! set when the connection is closed, so a backend process id reused later by another
//! instance's connection is never mistaken for ours.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::ConnectOptions;

use crate::store::StoreError;

/// The process ids of the backends of this instance's live writer connections.
#[derive(Default)]
pub(super) struct WriterBackends(Mutex<Vec<u32>>);

impl WriterBackends {
    /// Whether `pid` is the backend of one of this instance's writer connections.
    pub(super) fn contains(&self, pid: u32) -> bool {
        self.lock().contains(&pid)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<u32>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn remove(&self, pid: u32) {
        self.lock().retain(|&live| live != pid);
    }
}

/// The writers' connections while they are idle, and how to make new ones.
pub(super) struct WriterConnection {
    idle: Mutex<Vec<Held>>,
    /// How many idle connections are kept (one per log writer).
    keep: usize,
    options: PgConnectOptions,
    /// How long connecting may take before the database counts as unavailable.
    connect_timeout: Duration,
    backends: Arc<WriterBackends>,
}

/// A connection with its backend's process id.
struct Held {
    conn: PgConnection,
    pid: u32,
}

/// A writer connection taken for one batch: given back with
/// [`WriterConnection::give_back`] after a batch that succeeded, else closed when dropped
/// (and its backend forgotten).
pub(super) struct Taken {
    held: Option<Held>,
    backends: Arc<WriterBackends>,
}

impl Deref for Taken {
    type Target = PgConnection;

    fn deref(&self) -> &PgConnection {
        &self
            .held
            .as_ref()
            .expect("a taken connection until given back")
            .conn
    }
}

impl DerefMut for Taken {
    fn deref_mut(&mut self) -> &mut PgConnection {
        &mut self
            .held
            .as_mut()
            .expect("a taken connection until given back")
            .conn
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        if let Some(held) = &self.held {
            self.backends.remove(held.pid);
        }
    }
}

impl WriterConnection {
    /// No connection yet: the first batches connect. `keep`: the log writers, each of
    /// which may hold one connection.
    pub(super) fn new(options: PgConnectOptions, connect_timeout: Duration, keep: usize) -> Self {
        Self {
            idle: Mutex::new(Vec::new()),
            keep: keep.max(1),
            options,
            connect_timeout,
            backends: Arc::default(),
        }
    }

    /// The process ids of the writers' backends, for the change feed.
    pub(super) fn backends(&self) -> Arc<WriterBackends> {
        self.backends.clone()
    }

    /// An idle connection, or a new one. Whoever takes it owns it until
    /// [`Self::give_back`]; callers at once each get their own.
    pub(super) async fn take(&self) -> Result<Taken, StoreError> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let held = match idle {
            Some(held) => held,
            None => self.connect().await?,
        };
        Ok(Taken {
            held: Some(held),
            backends: self.backends.clone(),
        })
    }

    async fn connect(&self) -> Result<Held, StoreError> {
        let connecting = async {
            let mut conn = self.options.connect().await?;
            let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
                .fetch_one(&mut conn)
                .await?;
            let pid = pid as u32;
            self.backends.lock().push(pid);
            Ok::<_, StoreError>(Held { conn, pid })
        };
        match tokio::time::timeout(self.connect_timeout, connecting).await {
            Ok(connected) => connected,
            Err(_) => Err(StoreError::Unavailable(format!(
                "no connection to the database within {} ms",
                self.connect_timeout.as_millis()
            ))),
        }
    }

    /// Keeps the connection for a later batch (after one that succeeded), unless as many
    /// as there are writers already wait idle.
    pub(super) fn give_back(&self, mut taken: Taken) {
        let Some(held) = taken.held.take() else {
            return;
        };
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < self.keep {
            idle.push(held);
        } else {
            self.backends.remove(held.pid);
        }
    }
}
