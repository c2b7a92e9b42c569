//! Why the runner did not do what it was asked: outcomes in the agent's own terms. Only
//! the entry points (routes, the socket, AG-UI) turn them into HTTP errors
//! (`impl From<Refusal> for ApiError` in `error.rs`).

use serde_json::{json, Value};
use shared::api::SessionStatus;

use crate::domain::SessionId;
use crate::eventlog::WriteError;
use crate::store::StoreError;

/// Why a run was not started, stopped or answered.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("no session with id {0}")]
    SessionNotFound(SessionId),
    /// The message cannot be sent as it is (empty, too long, an unknown model).
    #[error("{0}")]
    InvalidMessage(String),
    /// The session is busy: running, or waiting for an answer.
    #[error("the session is {0:?}")]
    Busy(SessionStatus),
    /// Nothing runs and nothing waits in the session.
    #[error("nothing is running in this session")]
    Idle,
    #[error("no interrupt {0} in this session")]
    InterruptNotFound(String),
    /// What the request names (a message, a run) is not in the session.
    #[error("{0}")]
    NotFound(String),
    /// The interrupt has another answer already.
    #[error("the interrupt was already answered differently")]
    InterruptAnswered(Settled),
    /// The interrupt expired before this answer.
    #[error("the interrupt expired before it was answered")]
    InterruptExpired(Settled),
    /// The answer does not fit the question.
    #[error("{0}")]
    InvalidPayload(String),
    /// Instructions that cannot be kept as they are (too long, control characters).
    #[error("{0}")]
    InvalidInstructions(String),
    /// A branch cannot part at this seq: it is inside a run.
    #[error("seq {at_seq} is not a place a branch can part")]
    NotAForkPoint { at_seq: u64 },
    /// The session holds as many queued messages as it may.
    #[error(
        "this session already holds {0} queued messages; wait until one runs, or withdraw one"
    )]
    QueueFull(u64),
    /// The queued message has started its run (or joined the run it steered).
    #[error("the queued message already started run {run_id}")]
    QueuedStarted { run_id: String },
    /// The schedule's time already has a fire (another instance's, or one before a crash).
    #[error("this scheduled time already fired")]
    AlreadyFired,
    /// The server's queue of runs waiting for a slot is full.
    #[error("the server's run queue is full")]
    Saturated,
    /// This user already has this many runs waiting for a slot.
    #[error("{0} runs already wait for a slot")]
    TooManyQueuedRuns(usize),
    /// A change of the shared state does not apply, or leaves a state the rules refuse.
    #[error("the state change was refused: {0}")]
    InvalidState(super::shared_state::StateProblem),
    /// The run cannot go on: its user's budget has no room (and may not be overrun).
    #[error("{}", super::budget::describe(.0))]
    BudgetExceeded(Vec<shared::budget::BudgetLine>),
    /// Something that cannot happen did (logged where it was found).
    #[error("{0}")]
    Internal(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// How an interrupt was settled before an answer came.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    pub interrupt_id: String,
    /// `resolved`, `cancelled` or `expired`.
    pub state: String,
    /// The answer it was settled with.
    pub response: Value,
}

impl Settled {
    /// As the API shows it.
    pub fn to_json(&self) -> Value {
        json!({
            "interruptId": self.interrupt_id,
            "state": self.state,
            "response": self.response,
        })
    }
}

impl Refusal {
    /// The refusal for an interrupt id that names no interrupt of the session (the id
    /// cut short: it is the caller's text).
    pub fn interrupt_not_found(interrupt_id: &str) -> Self {
        Self::InterruptNotFound(interrupt_id.chars().take(80).collect())
    }
}
