//! Changing the open session's shared state from the page: each change is a JSON Patch
//! sent to `PATCH /api/sessions/{id}/state`. What the panel shows is always what the log
//! says (the change comes back over the socket as a `STATE_DELTA`), never a guess; a
//! refused change leaves the state as it was and says why.

use leptos::prelude::*;
use serde_json::{json, Value};
use shared::state::PlanStep;

use super::Session;
use crate::api::rest;

/// The open session's state editor: whether a change is on its way, and why the last one
/// was refused.
#[derive(Clone, Copy)]
pub struct StateEditor {
    session: Session,
    /// A change is on its way.
    pub busy: RwSignal<bool>,
    /// Why the last change was refused, until the next one.
    pub error: RwSignal<Option<String>>,
}

impl StateEditor {
    /// An editor of `session`'s state.
    pub fn new(session: Session) -> Self {
        Self {
            session,
            busy: RwSignal::new(false),
            error: RwSignal::new(None),
        }
    }

    /// Ticks a plan's step off (or back on). The patch first tests that the step is still
    /// the one the person saw, so a plan the agent rewrote meanwhile is not changed blindly.
    pub fn set_done(self, index: usize, step: &PlanStep, done: bool) {
        let status = if done { "done" } else { "pending" };
        self.send(vec![
            json!({"op": "test", "path": format!("/plan/{index}/step"), "value": step.step}),
            json!({"op": "replace", "path": format!("/plan/{index}/status"), "value": status}),
        ]);
    }

    /// Replaces the whole state with `text`, which must be a JSON object.
    pub fn replace_all(self, text: &str) -> bool {
        match serde_json::from_str::<Value>(text) {
            Ok(value) if value.is_object() => {
                self.send(vec![json!({"op": "replace", "path": "", "value": value})]);
                true
            }
            Ok(_) => {
                self.error
                    .set(Some("The state must be a JSON object ({ … }).".into()));
                false
            }
            Err(error) => {
                self.error.set(Some(format!("That is not JSON: {error}")));
                false
            }
        }
    }

    fn send(self, delta: Vec<Value>) {
        let Some(id) = self.session.id().get_untracked() else {
            return;
        };
        self.busy.set(true);
        self.error.set(None);
        leptos::task::spawn_local(async move {
            let sent = rest::patch_state(&id, &delta).await;
            self.busy.set(false);
            if let Err(error) = sent {
                self.error.set(Some(error.message));
            }
        });
    }
}
