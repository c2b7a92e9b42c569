//! What a line's log holds of the instructions ([`Given`]), and the person's own recorded
//! before a run's first model call. Below the runner: the run loop and the prompt read it.

use serde_json::json;
use shared::instructions::Scope;
use shared::EventBody;

use crate::agent::run::recorder::{Recorder, RunAbort};
use crate::agent::RunDeps;
use crate::domain::UserId;
use crate::store::Store;

/// The instructions the log holds for a line, as the latest of each scope says.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Given {
    /// The person's own, as the line's runs last recorded them.
    pub person: String,
    /// The conversation's own.
    pub conversation: String,
}

impl Given {
    /// Folds in a `CUSTOM tandem.instructions` value.
    pub fn observe(&mut self, value: &serde_json::Value) {
        let text = value["text"].as_str().unwrap_or_default().to_string();
        match value["scope"].as_str() {
            Some("person") => self.person = text,
            Some("conversation") => self.conversation = text,
            _ => {}
        }
    }
}

/// The event that records `text` as the instructions of `scope`.
pub(super) fn event(scope: Scope, text: &str) -> EventBody {
    EventBody::Custom {
        name: shared::custom::INSTRUCTIONS.into(),
        value: json!({ "scope": scope.as_str(), "text": text }),
    }
}

/// Before a run's first model call: records the person's own instructions when they differ
/// from the last ones the line recorded. True when it appended them (the history is then
/// to be read again).
pub(in crate::agent) async fn record_person<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    recorded: &Given,
    owner: UserId,
) -> Result<bool, RunAbort> {
    let current = deps.store.user_instructions(owner).await;
    let current = current.map_err(|e| RunAbort::Write(e.into()))?;
    if current == recorded.person {
        return Ok(false);
    }
    recorder.emit(event(Scope::Person, &current)).await?;
    Ok(true)
}
