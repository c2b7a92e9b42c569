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
//! Creating and deleting sessions goes through the writer too ([`SessionOp`]), in the
//! order it was asked for among the appends, with the same retries: every write to the
//! log's tables has one path.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::frames::event_frame;
use super::hub::{Hub, Published};
use crate::domain::{now_ms, SessionId, UserId};
use crate::store::{Applied, Command, SessionRow, Store, StoreError};

/// Commands taken into one transaction at most.
pub const MAX_BATCH: usize = 512;
/// Commands that may wait for the writer before producers feel back-pressure.
const QUEUE: usize = 4096;

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
    Append { command: Command, reply: Reply },
    Session { op: SessionOp, reply: SessionReply },
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
    /// Spawns the writer task on the current runtime; a busy or full database is retried
    /// for up to `retry_for` before the write fails.
    pub fn spawn<S: Store>(store: Arc<S>, hub: Hub, retry_for: Duration) -> Self {
        let (queue, jobs) = mpsc::channel(QUEUE);
        tokio::spawn(run(store, hub, jobs, retry_for));
        Self { queue }
    }

    /// Applies a command and waits until it is committed (or refused).
    pub async fn submit(&self, command: Command) -> Result<Applied, WriteError> {
        let (reply, outcome) = oneshot::channel();
        self.queue
            .send(Job::Append { command, reply })
            .await
            .map_err(|_| WriteError::Stopped)?;
        Ok(outcome.await.map_err(|_| WriteError::Stopped)??)
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

type Reply = oneshot::Sender<Result<Applied, Arc<StoreError>>>;

async fn run<S: Store>(
    store: Arc<S>,
    hub: Hub,
    mut jobs: mpsc::Receiver<Job>,
    retry_for: Duration,
) {
    let mut batch: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    while jobs.recv_many(&mut batch, MAX_BATCH).await > 0 {
        // Appends between two session writes share a transaction; the order asked for
        // holds across both kinds.
        let mut appends: Vec<(Command, Reply)> = Vec::new();
        for job in batch.drain(..) {
            match job {
                Job::Append { command, reply } => appends.push((command, reply)),
                Job::Session { op, reply } => {
                    append_all(&*store, &hub, std::mem::take(&mut appends), retry_for).await;
                    let done = retrying(retry_for, || session_op(&*store, &op)).await;
                    if let Err(error) = &done {
                        tracing::error!(%error, ?op, "a session write failed");
                    }
                    let _ = reply.send(done.map_err(Arc::new));
                }
            }
        }
        append_all(&*store, &hub, appends, retry_for).await;
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

/// Applies queued appends as one batch, then publishes what was committed.
async fn append_all<S: Store>(
    store: &S,
    hub: &Hub,
    appends: Vec<(Command, Reply)>,
    retry_for: Duration,
) {
    if appends.is_empty() {
        return;
    }
    let (commands, replies): (Vec<Command>, Vec<Reply>) = appends.into_iter().unzip();
    match retrying(retry_for, || store.apply(&commands, now_ms())).await {
        Ok(outcomes) => finish(hub, commands, replies, outcomes),
        Err(error) if commands.len() == 1 || error.is_transient() => {
            fail_all(&commands, replies, error)
        }
        Err(error) => {
            tracing::warn!(%error, size = commands.len(), "batch failed; retrying one by one");
            for (command, reply) in commands.into_iter().zip(replies) {
                let alone = std::slice::from_ref(&command);
                match store.apply(alone, now_ms()).await {
                    Ok(outcomes) => finish(hub, vec![command], vec![reply], outcomes),
                    Err(error) => fail(&command, vec![reply], error),
                }
            }
        }
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

fn fail_all(commands: &[Command], replies: Vec<Reply>, error: StoreError) {
    let sessions: Vec<String> = commands.iter().map(|c| c.session.to_string()).collect();
    tracing::error!(%error, ?sessions, "log write failed; nothing of it was committed");
    let error = Arc::new(error);
    for reply in replies {
        let _ = reply.send(Err(error.clone()));
    }
}

fn fail(command: &Command, replies: Vec<Reply>, error: StoreError) {
    tracing::error!(%error, session = %command.session, "log write failed");
    let error = Arc::new(error);
    for reply in replies {
        let _ = reply.send(Err(error.clone()));
    }
}

/// Publishes what was committed, then tells each producer its outcome.
fn finish(hub: &Hub, commands: Vec<Command>, replies: Vec<Reply>, outcomes: Vec<Applied>) {
    for ((command, reply), applied) in commands.into_iter().zip(replies).zip(outcomes) {
        if let Applied::Committed { first_seq } = applied {
            hub.publish(
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
        // A producer that stopped waiting is fine: its events are committed regardless.
        let _ = reply.send(Ok(applied));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::{append, temp_store};
    use crate::store::Rejection;

    #[tokio::test]
    async fn session_writes_keep_their_place_among_appends() {
        let (_dir, store) = temp_store().await;
        let writer = Writer::spawn(Arc::new(store), Hub::default(), Duration::from_secs(1));
        let id = SessionId::generate();
        let create = SessionOp::Create {
            owner: UserId::LOCAL,
            id,
            title: Some("Notes".into()),
        };
        let created = writer.session(create).await.unwrap();
        assert!(
            matches!(created, SessionDone::Created(row) if row.id == id && row.title == "Notes")
        );
        // Queued in this order: an append, the delete, another append.
        let (first, deleted, last) = tokio::join!(
            writer.submit(append(id, &["a"])),
            writer.session(SessionOp::Delete { id }),
            writer.submit(append(id, &["b"])),
        );
        assert_eq!(first.unwrap(), Applied::Committed { first_seq: 1 });
        assert!(matches!(deleted.unwrap(), SessionDone::Deleted(true)));
        assert_eq!(
            last.unwrap(),
            Applied::Rejected(Rejection::SessionMissing),
            "an append queued after the delete finds no session"
        );
        let again = writer.session(SessionOp::Delete { id }).await.unwrap();
        assert!(matches!(again, SessionDone::Deleted(false)));
    }
}
