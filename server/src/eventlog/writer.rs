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

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::frames::event_frame;
use super::hub::{Hub, Published};
use crate::domain::now_ms;
use crate::store::{Applied, Command, Store, StoreError};

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

struct Job {
    command: Command,
    reply: Reply,
}

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
            .send(Job { command, reply })
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
        let (commands, replies): (Vec<Command>, Vec<Reply>) =
            batch.drain(..).map(|job| (job.command, job.reply)).unzip();
        match apply_retrying(&*store, &commands, retry_for).await {
            Ok(outcomes) => finish(&hub, commands, replies, outcomes),
            Err(error) if commands.len() == 1 || error.is_transient() => {
                fail_all(&commands, replies, error)
            }
            Err(error) => {
                tracing::warn!(%error, size = commands.len(), "batch failed; retrying one by one");
                for (command, reply) in commands.into_iter().zip(replies) {
                    let alone = std::slice::from_ref(&command);
                    match store.apply(alone, now_ms()).await {
                        Ok(outcomes) => finish(&hub, vec![command], vec![reply], outcomes),
                        Err(error) => fail(&command, vec![reply], error),
                    }
                }
            }
        }
    }
}

/// Applies a batch, retrying a busy, locked or full database with backoff until
/// `retry_for` has passed.
async fn apply_retrying<S: Store>(
    store: &S,
    commands: &[Command],
    retry_for: Duration,
) -> Result<Vec<Applied>, StoreError> {
    let started = Instant::now();
    let mut wait = Duration::from_millis(20);
    loop {
        match store.apply(commands, now_ms()).await {
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
