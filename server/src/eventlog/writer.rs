//! The log writers: group commit.
//!
//! Producers (agent runs, HTTP handlers) send [`Command`]s over a bounded channel and
//! await the outcome. A writer takes everything queued (up to [`MAX_BATCH`]) and
//! applies it in one transaction, so many sessions' tokens share one commit. After the
//! commit, and only then, it publishes the events to the [`Hub`]. A batch that fails
//! because the database is busy, locked or full is retried with backoff for a bounded
//! time, producers waiting meanwhile; any other failing batch is retried command by
//! command so one bad command cannot fail the others. A command that finally fails was
//! not committed, and nothing of it is published.
//!
//! Where the database takes several writers at once ([`EventLog::log_writers`]:
//! PostgreSQL), there are that many, each with its own queue, thread and connection, and
//! each session's writes always go to the same one: one batch's round trip no longer
//! holds every other session's tokens back, and a session's order holds as with one.
//!
//! A producer may also pipeline its appends ([`Writer::send`]): they keep their order,
//! and the first one refused or failed breaks the rest of its stream (see `streams.rs`).
//!
//! Creating and deleting sessions goes through the writer too ([`SessionOp`]), in the
//! order it was asked for among the session's appends, with the same retries: every
//! write to the log's tables has one path.
//!
//! [`EventLog::log_writers`]: crate::store::EventLog::log_writers

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::commits::{retrying, Log};
use super::hub::Hub;
use super::streams::{Append, BrokenStreams, InFlight, Reply, StreamId, WriteError};
use crate::domain::{now_ms, SessionId, UserId};
use crate::store::{Applied, Command, SessionRow, Store, StoreError, Upkeep};

/// Commands taken into one transaction at most. Large, because a commit's cost grows
/// with the pages it touches (about one per session in the batch), not with its rows: the
/// more of each session's tokens share a commit, the cheaper each one is.
pub const MAX_BATCH: usize = 4096;
/// Commands that may wait for the writer before producers feel back-pressure.
const QUEUE: usize = 16384;
/// How soon an idle writer runs the store's upkeep when some is due.
const UPKEEP_TICK: Duration = Duration::from_millis(50);

impl From<StoreError> for WriteError {
    fn from(error: StoreError) -> Self {
        Self::Store(Arc::new(error))
    }
}

enum Job {
    Append {
        command: Command,
        stream: Option<StreamId>,
        reply: Reply,
    },
    Session {
        op: SessionOp,
        reply: SessionReply,
    },
    /// Commit what came before, do the store's upkeep now, answer, and stop.
    Close {
        reply: oneshot::Sender<()>,
    },
}

/// A write to the sessions table itself.
#[derive(Debug, Clone)]
pub enum SessionOp {
    /// A new session of `owner`; without a title its first message names it.
    Create {
        owner: UserId,
        id: SessionId,
        title: Option<String>,
    },
    /// A session and everything of it.
    Delete { id: SessionId },
}

impl SessionOp {
    /// The session written.
    fn session(&self) -> SessionId {
        match self {
            Self::Create { id, .. } | Self::Delete { id } => *id,
        }
    }
}

/// What a [`SessionOp`] did.
#[derive(Debug, Clone)]
pub enum SessionDone {
    Created(SessionRow),
    /// Whether there was a session to delete.
    Deleted(bool),
}

type SessionReply = oneshot::Sender<Result<SessionDone, Arc<StoreError>>>;

/// A cloneable handle to the log writers.
#[derive(Clone)]
pub struct Writer {
    /// Each writer's queue; a session's jobs always take the same one.
    queues: Arc<[mpsc::Sender<Job>]>,
    /// The writers' threads, joined by [`Writer::close`].
    threads: Arc<std::sync::Mutex<Vec<std::thread::JoinHandle<()>>>>,
}

impl Writer {
    /// Starts as many writers as the store takes at once
    /// ([`log_writers`](crate::store::EventLog::log_writers)),
    /// each on a thread of its own; a busy or full database is retried for up to
    /// `retry_for` before the write fails. They end once every handle is dropped.
    ///
    /// Their own threads (each with a single-threaded runtime) because an embedded
    /// database blocks a writer for each commit: on the app's runtime that would either
    /// stall the runs and sockets sharing its worker or (with `block_in_place`) hand the
    /// worker to another thread for every batch, a thread wake-up on each commit's path.
    pub fn spawn<S: Store>(store: Arc<S>, hub: Hub, retry_for: Duration) -> Self {
        Self::spawn_with(store, hub, retry_for, true)
    }

    /// [`Self::spawn`], joining the deltas of one message that share a commit into one
    /// event only if `join_deltas` (`--join-deltas`; off to measure what joining saves).
    pub fn spawn_with<S: Store>(
        store: Arc<S>,
        hub: Hub,
        retry_for: Duration,
        join_deltas: bool,
    ) -> Self {
        let count = store.log_writers().max(1);
        let (mut queues, mut threads) = (Vec::with_capacity(count), Vec::with_capacity(count));
        for index in 0..count {
            let (queue, jobs) = mpsc::channel(QUEUE);
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for a log writer");
            let (store, hub) = (store.clone(), hub.clone());
            let name = match count {
                1 => "tandem-writer".to_string(),
                _ => format!("tandem-writer-{index}"),
            };
            let thread = std::thread::Builder::new()
                .name(name)
                .spawn(move || runtime.block_on(run(store, hub, jobs, retry_for, join_deltas)))
                .expect("a thread for a log writer");
            queues.push(queue);
            threads.push(thread);
        }
        Self {
            queues: queues.into(),
            threads: Arc::new(std::sync::Mutex::new(threads)),
        }
    }

    /// Stops the writers at a clean point: everything queued before this call is
    /// committed (or refused) and published, the store's upkeep is done (on SQLite the
    /// tail is folded), and their threads are joined. Anything sent later fails with
    /// [`WriteError::Stopped`]. Calling it again does nothing.
    pub async fn close(&self) {
        for queue in self.queues.iter() {
            let (reply, done) = oneshot::channel();
            if queue.send(Job::Close { reply }).await.is_ok() {
                let _ = done.await;
            }
        }
        let threads =
            std::mem::take(&mut *self.threads.lock().expect("writer threads lock poisoned"));
        for thread in threads {
            if tokio::task::spawn_blocking(move || thread.join())
                .await
                .map_or(true, |joined| joined.is_err())
            {
                tracing::error!("a log writer's thread ended in a panic");
            }
        }
    }

    /// Commands queued for the writers and not yet taken into a batch.
    pub fn backlog(&self) -> usize {
        self.queues
            .iter()
            .map(|queue| queue.max_capacity() - queue.capacity())
            .sum()
    }

    /// Applies a command and waits until it is committed (or refused).
    pub async fn submit(&self, command: Command) -> Result<Applied, WriteError> {
        self.enqueue(command, None).await?.outcome().await
    }

    /// Hands a command of `stream` to the writer without waiting for its commit (only for
    /// room in the queue). Commands of one stream are applied in the order sent; once one
    /// is refused or fails, every later one gets that same outcome, unapplied.
    pub async fn send(&self, command: Command, stream: StreamId) -> Result<InFlight, WriteError> {
        self.enqueue(command, Some(stream)).await
    }

    async fn enqueue(
        &self,
        command: Command,
        stream: Option<StreamId>,
    ) -> Result<InFlight, WriteError> {
        let (reply, outcome) = oneshot::channel();
        self.queue_of(command.session)
            .send(Job::Append {
                command,
                stream,
                reply,
            })
            .await
            .map_err(|_| WriteError::Stopped)?;
        Ok(InFlight(outcome))
    }

    /// Creates or deletes a session and waits until it is done.
    pub async fn session(&self, op: SessionOp) -> Result<SessionDone, WriteError> {
        let (reply, outcome) = oneshot::channel();
        self.queue_of(op.session())
            .send(Job::Session { op, reply })
            .await
            .map_err(|_| WriteError::Stopped)?;
        Ok(outcome.await.map_err(|_| WriteError::Stopped)??)
    }

    /// The queue of the writer that writes `session`, always the same one.
    fn queue_of(&self, session: SessionId) -> &mpsc::Sender<Job> {
        &self.queues[self.writer_of(session)]
    }

    /// Which writer writes `session`: a hash of its id, so always the same one.
    fn writer_of(&self, session: SessionId) -> usize {
        let count = self.queues.len();
        if count == 1 {
            return 0;
        }
        let hash = std::hash::BuildHasher::hash_one(
            &std::hash::BuildHasherDefault::<std::hash::DefaultHasher>::default(),
            session,
        );
        (hash % count as u64) as usize
    }
}

async fn run<S: Store>(
    store: Arc<S>,
    hub: Hub,
    mut jobs: mpsc::Receiver<Job>,
    retry_for: Duration,
    join_deltas: bool,
) {
    let mut batch: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    let mut log = Log {
        store: &*store,
        hub: &hub,
        retry_for,
        broken: BrokenStreams::default(),
        join_deltas,
    };
    let mut upkeep = Upkeep::Done;
    loop {
        let received = match upkeep {
            Upkeep::Done => jobs.recv_many(&mut batch, MAX_BATCH).await,
            Upkeep::Later | Upkeep::Soon => tokio::select! {
                received = jobs.recv_many(&mut batch, MAX_BATCH) => received,
                () = tokio::time::sleep(UPKEEP_TICK) => {
                    upkeep = log.upkeep().await;
                    continue;
                }
            },
        };
        if received == 0 {
            return;
        }
        // Appends between two session writes share a transaction; the order asked for
        // holds across both kinds.
        let mut appends: Vec<Append> = Vec::new();
        // The session each stream appends to in `appends`: a stream's commands in one
        // transaction all append to one session, so the store refuses all of them or
        // none, and a stream stays a prefix of what was sent (see `streams`).
        let mut streams: HashMap<StreamId, SessionId> = HashMap::new();
        let mut closing = None;
        for job in batch.drain(..) {
            match job {
                Job::Append {
                    command,
                    stream,
                    reply,
                } => {
                    if let Some(stream) = stream {
                        let session = *streams.entry(stream).or_insert(command.session);
                        if session != command.session {
                            log.append_all(std::mem::take(&mut appends)).await;
                            streams.clear();
                            streams.insert(stream, command.session);
                        }
                    }
                    appends.push(Append {
                        command,
                        stream,
                        reply,
                    })
                }
                Job::Session { op, reply } => {
                    log.append_all(std::mem::take(&mut appends)).await;
                    streams.clear();
                    let done = retrying(retry_for, || session_op(&*store, &op)).await;
                    if let Err(error) = &done {
                        tracing::error!(%error, ?op, "a session write failed");
                    }
                    let _ = reply.send(done.map_err(Arc::new));
                }
                Job::Close { reply } => {
                    // Whatever came after the close is dropped unapplied with the rest
                    // of the batch: its producers learn that the writer has stopped.
                    closing = Some(reply);
                    break;
                }
            }
        }
        log.append_all(appends).await;
        if let Some(reply) = closing {
            if let Err(error) = store.settle_log().await {
                tracing::warn!(%error, "the log's upkeep failed at the stop");
            }
            let _ = reply.send(());
            return;
        }
        // Upkeep waits for a moment the queue is empty, unless the store is behind.
        upkeep = if jobs.is_empty() || upkeep == Upkeep::Soon {
            log.upkeep().await
        } else {
            Upkeep::Later
        };
    }
}

async fn session_op<S: Store>(store: &S, op: &SessionOp) -> Result<SessionDone, StoreError> {
    match op {
        SessionOp::Create { owner, id, title } => store
            .create_session(*owner, *id, title.as_deref(), now_ms())
            .await
            .map(SessionDone::Created),
        SessionOp::Delete { id } => store.delete_session(*id).await.map(SessionDone::Deleted),
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
