//! The single log writer: group commit.
//!
//! Producers (agent runs, HTTP handlers) send [`Command`]s over a bounded channel and
//! await the outcome. The writer takes everything queued (up to [`MAX_BATCH`]) and
//! applies it in one transaction, so many sessions' tokens share one commit. After the
//! commit, and only then, it publishes the events to the [`Hub`]. A failing batch is
//! retried command by command so one bad command cannot fail the others.

use std::sync::Arc;

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
    /// Spawns the writer task on the current runtime.
    pub fn spawn<S: Store>(store: Arc<S>, hub: Hub) -> Self {
        let (queue, jobs) = mpsc::channel(QUEUE);
        tokio::spawn(run(store, hub, jobs));
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

async fn run<S: Store>(store: Arc<S>, hub: Hub, mut jobs: mpsc::Receiver<Job>) {
    let mut batch: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    while jobs.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let (commands, replies): (Vec<Command>, Vec<Reply>) =
            batch.drain(..).map(|job| (job.command, job.reply)).unzip();
        match store.apply(&commands, now_ms()).await {
            Ok(outcomes) => finish(&hub, commands, replies, outcomes),
            Err(error) if commands.len() == 1 => fail(&commands[0], replies, error),
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
