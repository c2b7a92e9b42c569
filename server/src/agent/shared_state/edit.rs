//! A person's change of the shared state (`PATCH /api/sessions/{id}/state`).
//!
//! AG-UI allows no event between runs, so where the change goes depends on the session:
//! into the active run's stream while one runs (the run's next model call sees it); as a
//! short run of its own while the session is idle (`RUN_STARTED`, the `STATE_DELTA`,
//! `RUN_FINISHED`, committed at once: no model call, no webhook); and not at all while a
//! run waits for the person's answer (409 `awaiting_input`: the run ended on a question
//! an AG-UI client must answer with `resume` before anything else happens on the thread).

use serde_json::Value;
use shared::api::SessionStatus;
use shared::{Event, EventBody, Outcome};

use super::read;
use crate::agent::refusal::Refusal;
use crate::agent::runner::{rejected, Runner};
use crate::domain::{new_id, now_ms, SessionId};
use crate::store::{Applied, Command, Guard, LogEntry, Rejection, StateRead, Store};

/// How often a change is made again when the state or the session moved under it.
const ATTEMPTS: usize = 8;

/// The shared state of a runner's sessions (a view of the [`Runner`]).
pub struct SharedStates<'a, S> {
    pub(in crate::agent) runner: &'a Runner<S>,
}

/// The state after a change, and the seq of the event that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct StateNow {
    pub state: Value,
    /// The seq of the last state event (`None`: the state was never set).
    pub seq: Option<u64>,
}

impl<S: Store> SharedStates<'_, S> {
    /// The session's state now.
    pub async fn current(&self, session: SessionId) -> Result<StateNow, Refusal> {
        let folded = read(&*self.runner.deps.store, session).await?;
        Ok(StateNow {
            seq: folded.last_seq(),
            state: folded.document().clone(),
        })
    }

    /// Applies a person's JSON Patch to the session's state; nothing is written when it
    /// does not apply or the result breaks the rules.
    pub async fn edit(&self, session: SessionId, delta: Vec<Value>) -> Result<StateNow, Refusal> {
        let deps = &self.runner.deps;
        for _ in 0..ATTEMPTS {
            let row = deps
                .store
                .session(session)
                .await?
                .ok_or(Refusal::SessionNotFound(session))?;
            let folded = read(&*deps.store, session).await?;
            let changed = deps
                .state_rules
                .change(folded.document(), &delta)
                .map_err(Refusal::InvalidState)?;
            let change = EventBody::StateDelta {
                delta: delta.clone(),
            };
            let (guard, events, at) = match (row.status, row.active_run_id) {
                (SessionStatus::Running, Some(run_id)) => {
                    let guard = Guard::EditState {
                        run_id: Some(run_id),
                    };
                    (guard, vec![change], 0)
                }
                (SessionStatus::Idle, _) => {
                    let events = own_run(session, change);
                    (Guard::EditState { run_id: None }, events, 1)
                }
                (status, _) => return Err(Refusal::Busy(status)),
            };
            let now = now_ms();
            let command = Command {
                session,
                guard,
                entries: events
                    .into_iter()
                    .map(|body| LogEntry::new(Event::at(body, now)))
                    .collect(),
                state: Some(StateRead {
                    last_seq: folded.last_seq(),
                }),
            };
            match deps.writer.submit(command).await? {
                Applied::Committed { first_seq } => {
                    return Ok(StateNow {
                        state: changed,
                        seq: Some(first_seq + at),
                    })
                }
                // Another change came first, a run started or ended, or queued messages
                // start theirs: make it again from what the session is now.
                Applied::Rejected(
                    Rejection::StateMoved
                    | Rejection::RunEnded
                    | Rejection::QueueWaiting
                    | Rejection::Busy(SessionStatus::Running | SessionStatus::Idle),
                ) => continue,
                Applied::Rejected(rejection) => {
                    return Err(rejected(session, rejection)
                        .err()
                        .unwrap_or(Refusal::Internal("a state change was answered with a run")))
                }
            }
        }
        Err(Refusal::Busy(SessionStatus::Running))
    }
}

/// A change made while nothing runs: a short run of its own, so the log stays a sequence
/// of runs as AG-UI has it.
fn own_run(session: SessionId, change: EventBody) -> Vec<EventBody> {
    let run_id = new_id("run");
    vec![
        EventBody::RunStarted {
            thread_id: session.to_string(),
            run_id: run_id.clone(),
            parent_run_id: None,
            input: None,
        },
        change,
        EventBody::RunFinished {
            thread_id: session.to_string(),
            run_id,
            result: None,
            outcome: Some(Outcome::Success {
                pending_tool_call_ids: None,
            }),
            usage: None,
        },
    ]
}
