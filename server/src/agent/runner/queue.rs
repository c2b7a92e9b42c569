//! Messages a person sends while a run works (`whileRunning`): queued until the run
//! ends, steering the run at its next model call, interrupting it, or refused.
//!
//! A waiting message is a row, written by the log's writer under the `Queue` guard (which
//! checks, in the same transaction, that there is something to wait for). It leaves the
//! queue in the transaction that starts its run (`StartRun` naming it, which must be the
//! queue's first message) or appends it to the active run as the person's message
//! (`TakeSteering`), or withdraws it: so each runs once and in order, whichever instance
//! takes it. Its words enter the log only then, as the person's message with the queued
//! id as `messageId`: AG-UI allows no event between runs, and a queued message may wait
//! there (through a pause). Every change is announced on the change feed, so each
//! instance's sockets send their viewers a `queue` frame. The queue is taken when a run
//! ends here ([`Runner::start_next_queued`]) and, for idle sessions that still hold queued
//! messages (a crash between a run's end and the next start, or the end came on an
//! instance that then died), by every instance's lease keeper and at each start.

use shared::api::RunAccepted;
use shared::queue::WhileRunning;

use super::{rejected, Runner};
use crate::agent::new_message::{check_message, NewMessage};
use crate::agent::refusal::Refusal;
use crate::domain::{new_id, SessionId};
use crate::store::{Applied, Guard, QueuedExtra, QueuedRow, Rejection, Store};

/// The queue of a runner's sessions (a view of the [`Runner`]).
pub struct Queue<'a, S> {
    pub(super) runner: &'a Runner<S>,
}

impl<S: Store> Runner<S> {
    /// The messages waiting for their turn.
    pub fn queue(&self) -> Queue<'_, S> {
        Queue { runner: self }
    }
}

impl<S: Store> Queue<'_, S> {
    /// Puts a message that found its session busy in the queue (`mode`: queue, steer or
    /// interrupt; an interrupting one goes first and stops the active run). `None` when
    /// there is nothing to wait for any more: the run ended meanwhile, so the message
    /// may start its own.
    pub(super) async fn put(
        &self,
        session: SessionId,
        message: &NewMessage,
        run_id: &str,
        mode: WhileRunning,
    ) -> Result<Option<RunAccepted>, Refusal> {
        let row = QueuedRow {
            id: message.message_id.clone().unwrap_or_else(|| new_id("msg")),
            run_id: run_id.to_string(),
            // An AG-UI client sees one run per input: its steering message waits its turn.
            steer: mode == WhileRunning::Steer && message.input.is_none(),
            client_message_id: message.client_message_id.clone(),
            text: message.text.clone(),
            extra: QueuedExtra {
                model: message.model.clone(),
                input: message.input.clone(),
                attachments: message.attachments.clone(),
            },
        };
        let queued = row.message();
        let guard = Guard::Queue {
            message: Box::new(row),
            first: mode == WhileRunning::Interrupt,
            fire: message.fire.clone().map(Box::new),
        };
        match self.runner.submit(session, guard, Vec::new()).await? {
            Applied::Committed { .. } => {}
            Applied::Rejected(Rejection::NothingToWaitFor) => return Ok(None),
            Applied::Rejected(other) => return rejected(session, other).map(Some),
        }
        crate::metrics::METRICS.queued_message(mode.as_str());
        if mode == WhileRunning::Interrupt {
            self.interrupt(session).await?;
        }
        Ok(Some(RunAccepted {
            run_id: run_id.to_string(),
            duplicate: false,
            queued: Some(queued),
        }))
    }

    /// Stops what the session does, so that the message queued first runs next: the
    /// active run stops (its loop then takes the queue), a pending question is declined.
    async fn interrupt(&self, session: SessionId) -> Result<(), Refusal> {
        match self.runner.cancel(session).await {
            Ok(()) | Err(Refusal::Idle) => {}
            Err(other) => return Err(other),
        }
        self.runner.start_next_queued(session).await
    }

    /// Withdraws a queued message (`text: None`) or changes its text, before its turn.
    pub async fn change(
        &self,
        session: SessionId,
        id: &str,
        text: Option<String>,
    ) -> Result<(), Refusal> {
        let deps = &self.runner.deps;
        if let Some(text) = &text {
            check_message(text, None, deps.limits.max_message_bytes)?;
        }
        let guard = Guard::ChangeQueued {
            id: id.to_string(),
            text,
        };
        match self.runner.submit(session, guard, Vec::new()).await? {
            Applied::Committed { .. } => Ok(()),
            Applied::Rejected(Rejection::QueuedMissing) => Err(not_queued(id)),
            Applied::Rejected(other) => rejected(session, other).map(drop),
        }
    }
}

/// The refusal for an id that names no queued message of the session (cut short: it is
/// the caller's text).
fn not_queued(id: &str) -> Refusal {
    let id: String = id.chars().take(80).collect();
    Refusal::NotFound(format!("no queued message {id} in this session"))
}
