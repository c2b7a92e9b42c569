//! The single log writer: group commit.
//!
//! Producers (agent runs, HTTP handlers) send [`Command`]s over a bounded channel and
//! await the outcome. The writer takes everything queued (up to [`MAX_BATCH`]) and
//! applies it in one transaction, so many sessions' tokens share one commit. After the
//! commit, and only then, it publishes the events to the [`Hub`]. A batch that fails
//! because the database is busy, locked or full is retried with backoff for a bounded
//! time, producers waiting meanwhile; any other failing batch is retried command by
//! command so one bad command cannot fail the others. A command that finally fails was
//! not committed, and nothing of it is published.
//!
//! A producer may also pipeline its appends ([`Writer::send`]): they keep their order,
//! and the first one refused or failed breaks the rest of its stream (see `streams.rs`).
//!
//! Creating and deleting sessions goes through the writer too ([`SessionOp`]), in the
//! order it was asked for among the appends, with the same retries: every write to the
//! log's tables has one path.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::frames::event_frame;
use super::hub::{Hub, Published};
use super::streams::{BrokenStreams, InFlight, Outcome, StreamId};
use crate::domain::{now_ms, SessionId, UserId};
use crate::metrics::METRICS;
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

/// Why a write did not happen.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Store(#[from] Arc<StoreError>),
    #[error("the log writer has stopped")]
    Stopped,
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

/// What a [`SessionOp`] did.
#[derive(Debug, Clone)]
pub enum SessionDone {
    Created(SessionRow),
    /// Whether there was a session to delete.
    Deleted(bool),
}

type SessionReply = oneshot::Sender<Result<SessionDone, Arc<StoreError>>>;

/// A cloneable handle to the writer task.
#[derive(Clone)]
pub struct Writer {
    queue: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts the writer on a thread of its own; a busy or full database is retried for
    /// up to `retry_for` before the write fails. It ends once every handle is dropped.
    ///
    /// Its own thread (with a single-threaded runtime) because an embedded database
    /// blocks it for each commit: on the app's runtime that would either stall the
    /// runs and sockets sharing its worker or (with `block_in_place`) hand the worker
    /// to another thread for every batch, a thread wake-up on each commit's path.
    pub fn spawn<S: Store>(store: Arc<S>, hub: Hub, retry_for: Duration) -> Self {
        let (queue, jobs) = mpsc::channel(QUEUE);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the log writer");
        std::thread::Builder::new()
            .name("tandem-writer".into())
            .spawn(move || runtime.block_on(run(store, hub, jobs, retry_for)))
            .expect("a thread for the log writer");
        Self { queue }
    }

    /// Commands queued for the writer and not yet taken into a batch.
    pub fn backlog(&self) -> usize {
        self.queue.max_capacity() - self.queue.capacity()
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
        self.queue
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
        self.queue
            .send(Job::Session { op, reply })
            .await
            .map_err(|_| WriteError::Stopped)?;
        Ok(outcome.await.map_err(|_| WriteError::Stopped)??)
    }
}

type Reply = oneshot::Sender<Outcome>;

/// Who awaits an append's outcome, and the stream it belongs to.
type Waiting = (Option<StreamId>, Reply);

/// An append waiting for the writer: the command, its stream, who awaits it.
struct Append {
    command: Command,
    stream: Option<StreamId>,
    reply: Reply,
}

async fn run<S: Store>(
    store: Arc<S>,
    hub: Hub,
    mut jobs: mpsc::Receiver<Job>,
    retry_for: Duration,
) {
    let mut batch: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    let mut log = Log {
        store: &*store,
        hub: &hub,
        retry_for,
        broken: BrokenStreams::default(),
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
            }
        }
        log.append_all(appends).await;
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

/// The writer's side of the log: where appends go, and which streams are broken.
struct Log<'a, S> {
    store: &'a S,
    hub: &'a Hub,
    retry_for: Duration,
    broken: BrokenStreams,
}

impl<S: Store> Log<'_, S> {
    /// Runs one round of the store's upkeep; a failure is retried at the next round.
    async fn upkeep(&self) -> Upkeep {
        match self.store.log_upkeep().await {
            Ok(upkeep) => upkeep,
            Err(error) => {
                tracing::warn!(%error, "the log's upkeep failed; retrying");
                Upkeep::Later
            }
        }
    }

    /// Applies queued appends as one batch, then publishes what was committed.
    async fn append_all(&mut self, appends: Vec<Append>) {
        // Commands of a broken stream get its outcome again, unapplied.
        let (appends, refused): (Vec<Append>, Vec<Append>) = appends
            .into_iter()
            .partition(|append| self.broken.outcome_of(append.stream).is_none());
        for append in refused {
            let outcome = self.broken.outcome_of(append.stream);
            let _ = append.reply.send(outcome.expect("partitioned as broken"));
        }
        if appends.is_empty() {
            return;
        }
        let (commands, waiting): (Vec<Command>, Vec<Waiting>) = appends
            .into_iter()
            .map(|a| (a.command, (a.stream, a.reply)))
            .unzip();
        let store = self.store;
        let started = Instant::now();
        match retrying(self.retry_for, || store.apply(&commands, now_ms())).await {
            Ok(outcomes) => {
                let committed = commands
                    .iter()
                    .zip(&outcomes)
                    .filter(|(_, applied)| matches!(applied, Applied::Committed { .. }));
                let bodies = committed
                    .flat_map(|(command, _)| command.entries.iter().map(|e| &e.event.body));
                METRICS.committed(started.elapsed(), bodies);
                for ((command, waiting), applied) in commands.iter().zip(waiting).zip(outcomes) {
                    self.finish(command, waiting, applied);
                }
            }
            Err(error) if commands.len() == 1 || error.is_transient() => {
                let sessions: Vec<String> =
                    commands.iter().map(|c| c.session.to_string()).collect();
                tracing::error!(%error, ?sessions, "log write failed; nothing of it was committed");
                let error = Arc::new(error);
                for waiting in waiting {
                    self.reply(waiting, Err(error.clone()));
                }
            }
            Err(error) => {
                tracing::warn!(%error, size = commands.len(), "batch failed; retrying one by one");
                for (command, waiting) in commands.iter().zip(waiting) {
                    if let Some(outcome) = self.broken.outcome_of(waiting.0) {
                        let _ = waiting.1.send(outcome);
                        continue;
                    }
                    let started = Instant::now();
                    match store.apply(std::slice::from_ref(command), now_ms()).await {
                        Ok(mut outcomes) => match outcomes.pop() {
                            Some(applied) => {
                                if let Applied::Committed { .. } = applied {
                                    let bodies = command.entries.iter().map(|e| &e.event.body);
                                    METRICS.committed(started.elapsed(), bodies);
                                }
                                self.finish(command, waiting, applied)
                            }
                            None => tracing::error!("the store answered no outcome"),
                        },
                        Err(error) => {
                            tracing::error!(%error, session = %command.session, "log write failed");
                            self.reply(waiting, Err(Arc::new(error)));
                        }
                    }
                }
            }
        }
    }

    /// Publishes a committed command's events, then tells its producer the outcome.
    fn finish(&mut self, command: &Command, waiting: Waiting, applied: Applied) {
        if let Applied::Committed { first_seq } = applied {
            self.hub.publish(
                command.session,
                command.entries.iter().enumerate().map(|(offset, entry)| {
                    let seq = first_seq + offset as u64;
                    Published {
                        seq,
                        frame: event_frame(seq, &entry.json),
                    }
                }),
            );
        }
        self.reply(waiting, Ok(applied));
    }

    /// Tells a producer its outcome (one that stopped waiting is fine: a commit stands
    /// regardless), remembering a refusal or failure against its stream.
    fn reply(&mut self, (stream, reply): Waiting, outcome: Outcome) {
        self.broken.note(stream, &outcome);
        let _ = reply.send(outcome);
    }
}

/// Runs a write, retrying a busy, locked or full database with backoff until
/// `retry_for` has passed.
async fn retrying<T, Fut>(
    retry_for: Duration,
    mut write: impl FnMut() -> Fut,
) -> Result<T, StoreError>
where
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    let started = Instant::now();
    let mut wait = Duration::from_millis(20);
    loop {
        match write().await {
            Err(error) if error.is_transient() && started.elapsed() + wait <= retry_for => {
                tracing::warn!(%error, retry_in_ms = wait.as_millis() as u64, "the database refused a write; retrying");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(1));
            }
            outcome => return outcome,
        }
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
