//! A person's change of the shared state (`PATCH /api/sessions/{id}/state`): made from the
//! state as the log has it, checked, and appended as a note (`agent/annotations.rs`): into
//! the active run, or as a short run of its own. Another change that lands first makes it
//! be made again from the new state (or refused, if it no longer applies).

use serde_json::Value;
use shared::api::SessionStatus;
use shared::EventBody;

use super::read;
use crate::agent::annotations::{self, Note, ATTEMPTS};
use crate::agent::refusal::Refusal;
use crate::agent::runner::{rejected, Runner};
use crate::domain::SessionId;
use crate::store::{StateRead, Store};

/// The shared state of a runner's sessions (a view of the [`Runner`]).
pub struct SharedStates<'a, S> {
    pub(super) runner: &'a Runner<S>,
}

impl<S: Store> Runner<S> {
    /// Reading and changing the sessions' shared state.
    pub fn shared_state(&self) -> SharedStates<'_, S> {
        SharedStates { runner: self }
    }
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
            let folded = read(&*deps.store, session).await?;
            let changed = deps
                .state_rules
                .change(folded.document(), &delta)
                .map_err(Refusal::InvalidState)?;
            let note = Note {
                events: vec![EventBody::StateDelta {
                    delta: delta.clone(),
                }],
                state: Some(StateRead {
                    last_seq: folded.last_seq(),
                }),
                feedback: None,
            };
            match annotations::append(deps, session, note).await? {
                Ok(seq) => {
                    return Ok(StateNow {
                        state: changed,
                        seq: Some(seq),
                    })
                }
                Err(rejection) if annotations::moved(&rejection) => continue,
                Err(rejection) => {
                    return Err(rejected(session, rejection)
                        .err()
                        .unwrap_or(Refusal::Internal("a state change was answered with a run")))
                }
            }
        }
        Err(Refusal::Busy(SessionStatus::Running))
    }
}
