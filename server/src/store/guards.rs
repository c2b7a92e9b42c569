//! Guard decisions, the same for every backend: given what the backend read about the
//! session (and the interrupt) inside its write transaction, whether a command may be
//! applied, and what its guard then records with it.
//!
//! Pure: no SQL and no I/O. A backend reads the [`SessionFacts`] (and [`InterruptFacts`])
//! under its lock, calls [`decide`], and either refuses the command with the
//! [`Rejection`] or performs the [`GuardWrite`]s in the same transaction as the append.

use serde_json::Value;
use shared::api::SessionStatus;

use super::{
    Command, FireClaim, Guard, InterruptState, QueuedRow, Rejection, StoreError, MAX_QUEUED,
};

/// What a guard needs to know about the command's session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionFacts {
    pub status: SessionStatus,
    pub active_run_id: Option<String>,
}

/// What a `Resume` guard needs to know about the interrupt being answered.
#[derive(Debug, Clone, PartialEq)]
pub struct InterruptFacts {
    pub state: InterruptState,
    /// The answer already recorded, if any.
    pub response: Option<Value>,
    /// The run that answer started.
    pub resumed_run_id: Option<String>,
}

impl SessionFacts {
    /// The facts from a `sessions` row's `status` and `active_run_id` (an unknown status
    /// reads as running, the state that refuses the most).
    pub fn from_row(status: &str, active_run_id: Option<String>) -> Self {
        Self {
            status: SessionStatus::parse(status).unwrap_or(SessionStatus::Running),
            active_run_id,
        }
    }
}

impl InterruptFacts {
    /// The facts from an `interrupts` row's `status`, `response` (JSON) and
    /// `resumed_run_id`.
    pub fn from_row(
        state: &str,
        response: Option<&str>,
        resumed_run_id: Option<String>,
    ) -> Result<Self, StoreError> {
        let response = response
            .map(serde_json::from_str)
            .transpose()
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok(Self {
            state: InterruptState::parse(state),
            response,
            resumed_run_id,
        })
    }
}

/// Who holds the lease of the session's run, as this instance sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LeaseHolder {
    /// Nobody: no run of the session ever took one.
    #[default]
    Nobody,
    /// This instance.
    Us,
    /// Another instance (or, after a takeover, another process).
    Other,
}

/// What a backend reads for one command before deciding.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// The session, if it exists.
    pub session: Option<SessionFacts>,
    /// Who holds the session's run lease (read for `Append` and `Repair`).
    pub lease: LeaseHolder,
    /// For `Repair`: the seq the session's line ends at now.
    pub head: u64,
    /// For `StartRun` and `Queue` with a client message id: the run that id already
    /// started (or, queued, will start). For `ChangeQueued`: the run its message started.
    pub earlier_run: Option<String>,
    /// For `Resume`: the interrupt, if the session has it.
    pub interrupt: Option<InterruptFacts>,
    /// For `StartRun` and `Queue`: the id of the message first in the session's queue.
    pub queue_head: Option<String>,
    /// For `Queue`: how many messages wait.
    pub queue_len: u64,
    /// For `ChangeQueued` and `TakeSteering`: those of the ids named that are queued.
    pub queued: Vec<String>,
    /// For a `StartRun` or `Queue` that is a schedule's fire: its time already has one.
    pub fire_taken: bool,
}

/// A write the guard owns, made in the same transaction as the command's events.
#[derive(Debug, Clone, PartialEq)]
pub enum GuardWrite {
    /// Remember that this client message id started this run.
    RecordClientMessage {
        client_message_id: String,
        run_id: String,
    },
    /// Name the session by its first message, if it still has its default title.
    NameSession { title: String },
    /// This instance takes the session's run lease for the run it starts (a new epoch).
    TakeLease { run_id: String },
    /// Record the interrupt's answer and the run it starts.
    AnswerInterrupt {
        interrupt_id: String,
        state: InterruptState,
        response: Value,
        run_id: String,
    },
    /// Put a message in the queue, last (or `first`).
    InsertQueued {
        message: Box<QueuedRow>,
        first: bool,
    },
    /// Take a message off the queue (it runs, or was withdrawn).
    DeleteQueued { id: String },
    /// Change a queued message's text.
    EditQueued { id: String, text: String },
    /// Record (or change) a user's rating of a run, and owe its webhook.
    RecordFeedback(Box<super::FeedbackRow>),
    /// Record a schedule's fire: it started (or queued the message of) this run.
    RecordFire { claim: FireClaim, run_id: String },
}

/// What became of a command's guard.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Not applied; nothing changes.
    Refuse(Rejection),
    /// Applied, with these writes of the guard's own.
    Proceed(Vec<GuardWrite>),
}

/// A run's append: refused once another instance holds the session's run lease.
fn run_append(facts: &Facts) -> Verdict {
    match facts.lease {
        LeaseHolder::Other => Verdict::Refuse(Rejection::LeaseLost),
        LeaseHolder::Nobody | LeaseHolder::Us => Verdict::Proceed(Vec::new()),
    }
}

/// Decides a command's guard from the facts read for it. An answer is judged by its
/// interrupt alone (an interrupt goes with its session); every other guard needs the
/// session.
pub fn decide(command: &Command, facts: &Facts) -> Verdict {
    let with_session = |decide: &dyn Fn(&SessionFacts) -> Verdict| match &facts.session {
        Some(session) => decide(session),
        None => Verdict::Refuse(Rejection::SessionMissing),
    };
    match &command.guard {
        Guard::Append => with_session(&|_| run_append(facts)),
        Guard::Repair { after_seq } => with_session(&|_| match run_append(facts) {
            Verdict::Proceed(_) if facts.head != *after_seq => Verdict::Refuse(Rejection::LogMoved),
            verdict => verdict,
        }),
        Guard::StartRun {
            run_id,
            client_message_id,
            title,
            queued,
            fire,
        } => with_session(&|session| {
            let start = Start {
                run_id,
                client_message_id: client_message_id.as_deref(),
                title,
                queued: queued.as_deref(),
            };
            as_fire(
                fire.as_deref(),
                run_id,
                facts,
                start_run(session, facts, start),
            )
        }),
        Guard::Queue {
            message,
            first,
            fire,
        } => with_session(&|session| {
            let verdict = queue(session, facts, message, *first);
            as_fire(fire.as_deref(), &message.run_id, facts, verdict)
        }),
        Guard::ChangeQueued { id, text } => with_session(&|_| {
            if !facts.queued.contains(id) {
                return refuse_missing(facts);
            }
            Verdict::Proceed(vec![match text {
                Some(text) => GuardWrite::EditQueued {
                    id: id.clone(),
                    text: text.clone(),
                },
                None => GuardWrite::DeleteQueued { id: id.clone() },
            }])
        }),
        Guard::TakeSteering { run_id, ids } => with_session(&|_| {
            if facts.lease == LeaseHolder::Other {
                return Verdict::Refuse(Rejection::LeaseLost);
            }
            if ids.iter().any(|id| !facts.queued.contains(id)) {
                return Verdict::Refuse(Rejection::QueuedMissing);
            }
            let taken = ids.iter().flat_map(|id| {
                [
                    GuardWrite::DeleteQueued { id: id.clone() },
                    GuardWrite::RecordClientMessage {
                        client_message_id: id.clone(),
                        run_id: run_id.clone(),
                    },
                ]
            });
            Verdict::Proceed(taken.collect())
        }),
        Guard::InRun { run_id } => with_session(&|session| {
            let active = session.status == SessionStatus::Running
                && session.active_run_id.as_deref() == Some(run_id.as_str());
            if active {
                Verdict::Proceed(Vec::new())
            } else {
                Verdict::Refuse(Rejection::RunEnded)
            }
        }),
        Guard::Annotate { run_id, feedback } => with_session(&|session| {
            let writes = || {
                let recorded = feedback.clone().map(GuardWrite::RecordFeedback);
                Verdict::Proceed(recorded.into_iter().collect())
            };
            let active = |run_id: &str| {
                session.status == SessionStatus::Running
                    && session.active_run_id.as_deref() == Some(run_id)
            };
            match (run_id, session.status) {
                (Some(run_id), _) if active(run_id) => writes(),
                (Some(_), _) => Verdict::Refuse(Rejection::RunEnded),
                (None, SessionStatus::Idle) if facts.queue_head.is_some() => {
                    Verdict::Refuse(Rejection::QueueWaiting)
                }
                (None, SessionStatus::Idle | SessionStatus::AwaitingInput) => writes(),
                (None, status) => Verdict::Refuse(Rejection::Busy(status)),
            }
        }),
        Guard::Resume {
            interrupt_id,
            response,
            run_id,
        } => resume(facts.interrupt.as_ref(), interrupt_id, response, run_id),
    }
}

/// What a `StartRun` guard names.
struct Start<'a> {
    run_id: &'a str,
    client_message_id: Option<&'a str>,
    title: &'a str,
    queued: Option<&'a str>,
}

/// A user message starts a run on an idle session whose queue holds nothing before it;
/// a repeated client message id gets the run it started.
fn start_run(session: &SessionFacts, facts: &Facts, start: Start<'_>) -> Verdict {
    if let Some(earlier) = &facts.earlier_run {
        return Verdict::Refuse(Rejection::DuplicateMessage {
            run_id: earlier.clone(),
        });
    }
    if session.status != SessionStatus::Idle {
        return Verdict::Refuse(Rejection::Busy(session.status));
    }
    match (start.queued, facts.queue_head.as_deref()) {
        (None, Some(_)) => return Verdict::Refuse(Rejection::QueueWaiting),
        (Some(queued), head) if head != Some(queued) => {
            return Verdict::Refuse(Rejection::QueuedMissing)
        }
        _ => {}
    }
    let run_id = start.run_id;
    let recorded = start.client_message_id.into_iter().chain(start.queued);
    let mut writes: Vec<GuardWrite> = recorded
        .map(|id| GuardWrite::RecordClientMessage {
            client_message_id: id.to_string(),
            run_id: run_id.to_string(),
        })
        .collect();
    if let Some(id) = start.queued {
        writes.push(GuardWrite::DeleteQueued { id: id.to_string() });
    }
    // A run that no message of the person's starts (Continue) names nothing.
    if !start.title.is_empty() {
        writes.push(GuardWrite::NameSession {
            title: start.title.to_string(),
        });
    }
    writes.push(GuardWrite::TakeLease {
        run_id: run_id.to_string(),
    });
    Verdict::Proceed(writes)
}

/// A message waits for its turn, unless there is nothing to wait for; a repeated client
/// message id gets the run it started or will start.
fn queue(session: &SessionFacts, facts: &Facts, message: &QueuedRow, first: bool) -> Verdict {
    if let Some(earlier) = &facts.earlier_run {
        return Verdict::Refuse(Rejection::DuplicateMessage {
            run_id: earlier.clone(),
        });
    }
    if session.status == SessionStatus::Idle && facts.queue_head.is_none() {
        return Verdict::Refuse(Rejection::NothingToWaitFor);
    }
    if facts.queue_len >= MAX_QUEUED {
        return Verdict::Refuse(Rejection::QueueFull);
    }
    Verdict::Proceed(vec![GuardWrite::InsertQueued {
        message: Box::new(message.clone()),
        first,
    }])
}

/// A command that is a schedule's fire: refused if its time already has a fire (before
/// anything else: the other fire's run may well be what makes this one busy), and
/// otherwise recorded with the command.
fn as_fire(fire: Option<&FireClaim>, run_id: &str, facts: &Facts, verdict: Verdict) -> Verdict {
    let Some(claim) = fire else {
        return verdict;
    };
    if facts.fire_taken {
        return Verdict::Refuse(Rejection::AlreadyFired);
    }
    match verdict {
        Verdict::Proceed(mut writes) => {
            writes.push(GuardWrite::RecordFire {
                claim: claim.clone(),
                run_id: run_id.to_string(),
            });
            Verdict::Proceed(writes)
        }
        refused => refused,
    }
}

/// A queued message that is not in the queue: it started a run, or there is none.
fn refuse_missing(facts: &Facts) -> Verdict {
    Verdict::Refuse(match &facts.earlier_run {
        Some(run_id) => Rejection::QueuedStarted {
            run_id: run_id.clone(),
        },
        None => Rejection::QueuedMissing,
    })
}

fn resume(
    interrupt: Option<&InterruptFacts>,
    interrupt_id: &str,
    response: &Value,
    run_id: &str,
) -> Verdict {
    let Some(interrupt) = interrupt else {
        return Verdict::Refuse(Rejection::InterruptMissing);
    };
    if interrupt.state != InterruptState::Pending {
        let stored = interrupt.response.clone().unwrap_or_default();
        return Verdict::Refuse(Rejection::InterruptAnswered {
            interrupt_id: interrupt_id.to_string(),
            same: &stored == response,
            state: interrupt.state.as_str().to_string(),
            response: stored,
            run_id: interrupt.resumed_run_id.clone(),
        });
    }
    let state = match response.get("status").and_then(Value::as_str) {
        Some("cancelled") => InterruptState::Cancelled,
        Some("expired") => InterruptState::Expired,
        _ => InterruptState::Resolved,
    };
    Verdict::Proceed(vec![
        GuardWrite::AnswerInterrupt {
            interrupt_id: interrupt_id.to_string(),
            state,
            response: response.clone(),
            run_id: run_id.to_string(),
        },
        GuardWrite::TakeLease {
            run_id: run_id.to_string(),
        },
    ])
}

#[cfg(test)]
#[path = "guards_tests.rs"]
mod tests;
