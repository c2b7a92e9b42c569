//! Pipelined appends: a producer may hand the writer a stream of commands without
//! awaiting each commit ([`Writer::send`](super::Writer::send)), so one run's tokens are
//! not bounded by commit latency.
//!
//! What keeps that safe is order: the writer applies a stream's commands in the order
//! sent, and once one of them fails or is refused, it gives every later command of the
//! same stream that same outcome without applying it. A stream's committed events are
//! therefore always a prefix of what was sent; no token goes missing from the middle of
//! a message because a neighbour's commit failed.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::sync::oneshot;

use crate::store::{Applied, Command, StoreError};

/// Why a write did not happen.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Store(#[from] Arc<StoreError>),
    #[error("the log writer has stopped")]
    Stopped,
}

/// Where a command's outcome goes.
pub(super) type Reply = oneshot::Sender<Outcome>;

/// An append waiting for the writer: the command, its stream, who awaits it.
pub(super) struct Append {
    pub command: Command,
    pub stream: Option<StreamId>,
    pub reply: Reply,
}

/// One producer's ordered stream of appends (a run's, say).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamId(u64);

impl StreamId {
    /// A stream no command has used yet.
    pub fn fresh() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// What the writer answers for one command.
pub(super) type Outcome = Result<Applied, Arc<StoreError>>;

/// A command handed to the writer, its outcome still to come.
#[derive(Debug)]
pub struct InFlight(pub(super) oneshot::Receiver<Outcome>);

impl InFlight {
    /// Waits until the command is committed (or refused, or failed).
    pub async fn outcome(self) -> Result<Applied, WriteError> {
        Ok(self.0.await.map_err(|_| WriteError::Stopped)??)
    }
}

/// Streams whose commands the writer refuses from now on, with the outcome to repeat.
///
/// Bounded: a broken stream's producer learns of it at its next await and stops, so only
/// the most recent breaks can still have commands on the way.
#[derive(Default)]
pub(super) struct BrokenStreams {
    outcomes: HashMap<StreamId, Outcome>,
    order: VecDeque<StreamId>,
}

/// Broken streams remembered at most.
const REMEMBERED: usize = 1024;

impl BrokenStreams {
    /// The outcome to give a command of `stream`, if the stream is broken.
    pub(super) fn outcome_of(&self, stream: Option<StreamId>) -> Option<Outcome> {
        stream.and_then(|stream| self.outcomes.get(&stream).cloned())
    }

    /// Records `outcome` of a command of `stream`; a refusal or failure breaks the stream.
    pub(super) fn note(&mut self, stream: Option<StreamId>, outcome: &Outcome) {
        let Some(stream) = stream else { return };
        if matches!(outcome, Ok(Applied::Committed { .. })) || self.outcomes.contains_key(&stream) {
            return;
        }
        if self.order.len() == REMEMBERED {
            if let Some(oldest) = self.order.pop_front() {
                self.outcomes.remove(&oldest);
            }
        }
        self.order.push_back(stream);
        self.outcomes.insert(stream, outcome.clone());
    }
}
