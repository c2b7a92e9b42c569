//! Committing a batch of appends and publishing it: the writer's side of the log
//! ([`Log`]). What a batch commits reaches the [`Hub`] only after the commit, and each
//! producer hears its command's outcome; a broken stream's later commands get its
//! outcome unapplied, a failing batch is retried command by command, and a busy, locked
//! or full database is retried with backoff ([`retrying`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::coalesce::{coalesce, Joined};
use super::hub::{Hub, Published};
use super::streams::{Append, BrokenStreams, Outcome, Reply, StreamId};
use crate::domain::now_ms;
use crate::metrics::METRICS;
use crate::store::{Applied, Command, FramePage, Store, StoreError, Upkeep};

/// Who awaits a command's outcome (several, when deltas were joined), and the stream
/// it belongs to.
type Waiting = (Option<StreamId>, Vec<Reply>);

/// The writer's side of the log: where appends go, and which streams are broken.
pub(super) struct Log<'a, S> {
    pub store: &'a S,
    pub hub: &'a Hub,
    pub retry_for: Duration,
    pub broken: BrokenStreams,
    /// Whether deltas of one message that share the batch become one event.
    pub join_deltas: bool,
}

impl<S: Store> Log<'_, S> {
    /// Runs one round of the store's upkeep; a failure is retried at the next round.
    pub async fn upkeep(&self) -> Upkeep {
        match self.store.log_upkeep().await {
            Ok(upkeep) => upkeep,
            Err(error) => {
                tracing::warn!(%error, "the log's upkeep failed; retrying");
                Upkeep::Later
            }
        }
    }

    /// Applies queued appends as one batch, then publishes what was committed.
    pub async fn append_all(&mut self, appends: Vec<Append>) {
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
        let joined = match self.join_deltas {
            true => coalesce(appends),
            false => appends.into_iter().map(Joined::alone).collect(),
        };
        let (commands, waiting): (Vec<Command>, Vec<Waiting>) = joined
            .into_iter()
            .map(|joined| (joined.command, (joined.stream, joined.replies)))
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
                        for reply in waiting.1 {
                            let _ = reply.send(outcome.clone());
                        }
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
                        frame: FramePage::frame(seq, &entry.json),
                    }
                }),
            );
        }
        self.reply(waiting, Ok(applied));
    }

    /// Tells a producer its outcome (one that stopped waiting is fine: a commit stands
    /// regardless), remembering a refusal or failure against its stream.
    fn reply(&mut self, (stream, replies): Waiting, outcome: Outcome) {
        self.broken.note(stream, &outcome);
        for reply in replies {
            let _ = reply.send(outcome.clone());
        }
    }
}

/// Runs a write, retrying a busy, locked or full database with backoff until
/// `retry_for` has passed.
pub(super) async fn retrying<T, Fut>(
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
