//! Write commands: events to append to one session, behind an optional guard that is
//! checked in the same transaction as the append.

use shared::api::SessionStatus;
use shared::Event;

use super::QueuedRow;
use crate::domain::SessionId;

/// An event ready to append: the typed event (for deriving effects) and its JSON
/// (serialised once, by the producer, off the writer's path).
#[derive(Debug, Clone)]
pub struct LogEntry {
    pub event: Event,
    pub json: String,
}

impl LogEntry {
    /// Serialises the event.
    pub fn new(event: Event) -> Self {
        let json = json_of(&event);
        Self { event, json }
    }

    /// Serialises the event again, after it was changed in place.
    pub fn reserialise(&mut self) {
        self.json = json_of(&self.event);
    }
}

fn json_of(event: &Event) -> String {
    serde_json::to_string(event).expect("events always serialise")
}

/// The precondition a command needs.
#[derive(Debug, Clone)]
pub enum Guard {
    /// The run that owns the session appends: the session must exist and no other
    /// instance may hold its run lease.
    Append,
    /// A run's repair after its lease was taken over (the events that close or resume
    /// what its last holder left open): as [`Guard::Append`], and the session's line must
    /// still end at `after_seq`, the last event the repair was computed from. So nothing
    /// the last holder appended late (an append it began before the takeover) can land
    /// between the read and the repair; if something did, the repair is refused
    /// ([`Rejection::LogMoved`]) and computed again from the longer log.
    Repair { after_seq: u64 },
    /// A user message starts a run: the session must be idle with no message queued
    /// before it. A repeated `client_message_id` is answered with the run it started.
    StartRun {
        run_id: String,
        client_message_id: Option<String>,
        /// Names a session that still has its default title (empty: names nothing).
        title: String,
        /// The queued message this run starts: it must be first in the queue, and leaves
        /// it in the same transaction.
        queued: Option<String>,
        /// The schedule's fire this run is: recorded with it, refused if its time already
        /// has a fire.
        fire: Option<Box<super::FireClaim>>,
    },
    /// A person's message waits for its turn: a run is active, a question waits, or
    /// messages queued earlier wait. `first`: before the others (an interrupting message).
    Queue {
        message: Box<QueuedRow>,
        first: bool,
        /// The schedule's fire this message is, as [`Guard::StartRun`]'s.
        fire: Option<Box<super::FireClaim>>,
    },
    /// A queued message is withdrawn (`text: None`) or edited before its turn.
    ChangeQueued { id: String, text: Option<String> },
    /// The active run `run_id` appends steering messages `ids` as the person's messages:
    /// as [`Guard::Append`], and each must still be queued (it leaves the queue here).
    TakeSteering { run_id: String, ids: Vec<String> },
    /// Events about a run from outside it (a stop request): the run must still be the
    /// session's active one, so nothing lands after its terminal event.
    InRun { run_id: String },
    /// A person's note on the session that is no turn of its conversation: a change of the
    /// shared state, a rating of an answer. `run_id: Some`: the events go into that run,
    /// which must still be the session's active one (as [`Guard::InRun`]); `None`: they
    /// are a short run of their own (`RUN_STARTED`, the note, `RUN_FINISHED`) that changes
    /// neither the session's status nor its questions, so no run may be active, and an
    /// idle session must hold nothing queued (its next run starts first). `feedback`: the
    /// rating the events record, written with them.
    Annotate {
        run_id: Option<String>,
        feedback: Option<Box<super::FeedbackRow>>,
    },
    /// An answer to a pending interrupt; the answer is recorded with the events.
    Resume {
        interrupt_id: String,
        response: serde_json::Value,
        run_id: String,
    },
}

impl Guard {
    /// Whether the run appends (its events, or their repair) rather than a person acting.
    pub fn is_the_runs(&self) -> bool {
        matches!(self, Self::Append | Self::Repair { .. })
    }

    /// Whether a command with this guard is activity of the conversation, which moves the
    /// session's `updated_at` (the session list's order and time) even when it changes no
    /// status: a person's command is; a run's plain append (a token) is not, and neither is
    /// a rating of an answer, which says something of the answer, not of the
    /// conversation's progress.
    pub fn moves_activity(&self) -> bool {
        let rating = matches!(
            self,
            Self::Annotate {
                feedback: Some(_),
                ..
            }
        );
        !self.is_the_runs() && !rating
    }

    /// Whether a command with this guard changes the session's queued messages (which
    /// viewers are then told of).
    pub fn changes_queue(&self) -> bool {
        matches!(
            self,
            Self::Queue { .. }
                | Self::ChangeQueued { .. }
                | Self::TakeSteering { .. }
                | Self::StartRun {
                    queued: Some(_),
                    ..
                }
        )
    }
}

/// Events for one session, applied only if the guard holds.
#[derive(Debug, Clone)]
pub struct Command {
    pub session: SessionId,
    pub guard: Guard,
    pub entries: Vec<LogEntry>,
    /// Set when the entries hold state events (`STATE_SNAPSHOT`, `STATE_DELTA`): the state
    /// they were made from, which must still be the session's.
    pub state: Option<StateRead>,
}

impl Command {
    /// Whether this is a plain append of a run (the token path): no guard of its own and
    /// no state to check.
    pub fn is_plain_append(&self) -> bool {
        matches!(self.guard, Guard::Append) && self.state.is_none()
    }
}

/// The shared state a change was computed from: the seq of the last state event in the
/// session's line when it was read (`None`: there was none). A change applies only if no
/// state event was appended since, so two changes made at once never undo each other:
/// the later one is refused ([`Rejection::StateMoved`]) and made again from the new state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateRead {
    pub last_seq: Option<u64>,
}

/// What became of one command.
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    /// Committed; the entries got `first_seq`, `first_seq + 1`, ….
    Committed { first_seq: u64 },
    /// Not applied; nothing changed.
    Rejected(Rejection),
}

/// Why a guard refused a command.
#[derive(Debug, Clone, PartialEq)]
pub enum Rejection {
    SessionMissing,
    /// The session is not idle.
    Busy(SessionStatus),
    /// The client message id was already taken by this run.
    DuplicateMessage {
        run_id: String,
    },
    /// A message meant to wait finds nothing to wait for (the session is idle and nothing
    /// is queued): it may start its run.
    NothingToWaitFor,
    /// The session holds as many queued messages as it may.
    QueueFull,
    /// The session is idle but messages queued earlier go first.
    QueueWaiting,
    /// The queued message is not (or no longer, or not first) in the queue.
    QueuedMissing,
    /// The queued message already started this run (or joined it, steering).
    QueuedStarted {
        run_id: String,
    },
    InterruptMissing,
    /// The run is no longer the session's active run.
    RunEnded,
    /// Another instance holds the lease of the session's run (it took the run over):
    /// this instance's appends for it are fenced off.
    LeaseLost,
    /// A state event was appended since the change's state was read.
    StateMoved,
    /// The session's line grew past the seq a repair was computed from
    /// ([`Guard::Repair`]).
    LogMoved,
    /// The schedule's time already has a fire (another instance's, or a crash's before).
    AlreadyFired,
    /// The interrupt already has an answer (`same`: equal to the one offered).
    InterruptAnswered {
        interrupt_id: String,
        same: bool,
        state: String,
        response: serde_json::Value,
        run_id: Option<String>,
    },
}
