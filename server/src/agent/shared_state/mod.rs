//! The session's shared state: a JSON document the model and the person both change
//! (AG-UI's `STATE_SNAPSHOT` / `STATE_DELTA`; the fold is `shared::state`).
//!
//! The document is never stored apart from the log: it is the fold of the log's state
//! events along the session's line (a branch starts from its prefix's). The session row
//! keeps only the seq of its last state event, written in the same transaction, and a
//! change names the state it was made from ([`crate::store::StateRead`]): if another
//! change landed first, the store refuses it and it is made again from the new state, so
//! two changes at once (the model's and the person's, or two instances') never undo each
//! other. Every change is checked before anything is written: its patch must apply, and
//! the result must fit `--state-schema` (when set), `--max-state-bytes` and the depth
//! every path shares ([`shared::nesting::MAX_DEPTH`], so the log can always be read back).
//!
//! Who changes it: the model with the built-in `update_state` tool ([`in_run`]), the
//! person with `PATCH /api/sessions/{id}/state` ([`edit`]), and an AG-UI client that sends
//! a `state` of its own with its input (adopted as the run's `STATE_SNAPSHOT`, unless the
//! session held that very state before: then the client only has not caught up, and a
//! change made since, a person's say, is not undone by it). Each run
//! begins with a `STATE_SNAPSHOT` when the state is not empty, so a client following one
//! run (`@ag-ui/client`) starts from the server's document.

pub mod edit;
pub(super) mod in_run;

use std::sync::Arc;

use serde_json::Value;
use shared::state::{self, PatchFailure, SharedState};

use crate::domain::SessionId;
use crate::store::{Store, StoreError};

/// What a state document must be: within `--max-state-bytes` and, when set, valid against
/// `--state-schema`.
pub struct StateRules {
    schema: Option<jsonschema::Validator>,
    max_bytes: usize,
}

impl std::fmt::Debug for StateRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateRules")
            .field("schema", &self.schema.is_some())
            .field("max_bytes", &self.max_bytes)
            .finish()
    }
}

/// Why a change of the state was refused: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateProblem {
    /// The operation of the patch that failed, if one did (0: the first).
    pub operation: Option<usize>,
    /// The JSON Pointer of what is wrong: the operation's path, or where the document
    /// breaks the schema.
    pub path: String,
    /// What is wrong, in a sentence.
    pub message: String,
}

impl std::fmt::Display for StateProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.operation {
            Some(operation) => write!(
                f,
                "operation {operation} at \"{}\": {}",
                self.path, self.message
            ),
            None => write!(f, "at \"{}\": {}", self.path, self.message),
        }
    }
}

impl From<PatchFailure> for StateProblem {
    fn from(failure: PatchFailure) -> Self {
        Self {
            operation: Some(failure.operation),
            path: failure.path,
            message: failure.message,
        }
    }
}

impl StateRules {
    /// Rules with an optional JSON Schema (which must compile) and a size limit.
    pub fn new(schema: Option<&Value>, max_bytes: usize) -> Result<Self, String> {
        let schema = schema
            .map(jsonschema::validator_for)
            .transpose()
            .map_err(|error| format!("the state schema does not compile: {error}"))?;
        Ok(Self { schema, max_bytes })
    }

    /// No schema, 64 KiB.
    pub fn lenient() -> Arc<Self> {
        Arc::new(Self {
            schema: None,
            max_bytes: 64 * 1024,
        })
    }

    /// Whether the rules have a schema.
    pub fn has_schema(&self) -> bool {
        self.schema.is_some()
    }

    /// Checks a whole document: an object, no larger than allowed, valid against the
    /// schema.
    pub fn check(&self, document: &Value) -> Result<(), StateProblem> {
        let problem = |path: String, message: String| StateProblem {
            operation: None,
            path,
            message,
        };
        if !document.is_object() {
            return Err(problem(
                String::new(),
                "the state must be a JSON object".into(),
            ));
        }
        if let Some(why) = shared::nesting::too_deep("the state", document) {
            return Err(problem(String::new(), why));
        }
        let size = serde_json::to_string(document).map_or(usize::MAX, |text| text.len());
        if size > self.max_bytes {
            return Err(problem(
                String::new(),
                format!(
                    "the state would be {size} bytes, over the {} of --max-state-bytes",
                    self.max_bytes
                ),
            ));
        }
        if let Some(schema) = &self.schema {
            if let Some(error) = schema.iter_errors(document).next() {
                let path = error.instance_path().to_string();
                return Err(problem(path, format!("breaks the state schema: {error}")));
            }
        }
        Ok(())
    }

    /// The document `delta` makes of `current`, if the patch applies and the result
    /// passes [`Self::check`].
    pub fn change(&self, current: &Value, delta: &[Value]) -> Result<Value, StateProblem> {
        if delta.is_empty() {
            return Err(StateProblem {
                operation: None,
                path: String::new(),
                message: "the patch has no operations".into(),
            });
        }
        for (operation, op) in delta.iter().enumerate() {
            let too_deep = op
                .get("value")
                .and_then(|value| shared::nesting::too_deep("the operation's value", value));
            if let Some(message) = too_deep {
                let path = op.get("path").and_then(Value::as_str).unwrap_or_default();
                return Err(StateProblem {
                    operation: Some(operation),
                    path: path.to_string(),
                    message,
                });
            }
        }
        let changed = state::apply(current, delta)?;
        self.check(&changed)?;
        Ok(changed)
    }
}

/// Whether the session's state was ever `document` (a client that sends it back sends a
/// state it was given, not one it changed).
pub async fn once_was<S: Store>(
    store: &S,
    session: SessionId,
    document: &Value,
) -> Result<bool, StoreError> {
    let rows = store.events_after(session, 0, u32::MAX).await?;
    let mut state = SharedState::default();
    for row in rows.iter().filter(|row| row.json.contains("\"STATE_")) {
        if let Ok(event) = serde_json::from_str::<shared::Event>(&row.json) {
            state.observe(row.seq, &event.body);
            if state.document() == document {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The session's state now: the fold of its line's state events.
pub async fn read<S: Store>(store: &S, session: SessionId) -> Result<SharedState, StoreError> {
    let rows = store.events_after(session, 0, u32::MAX).await?;
    let mut state = SharedState::default();
    for row in rows.iter().filter(|row| row.json.contains("\"STATE_")) {
        if let Ok(event) = serde_json::from_str::<shared::Event>(&row.json) {
            state.observe(row.seq, &event.body);
        }
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_change_must_apply_fit_and_stay_an_object() {
        let schema = json!({"type": "object", "properties": {"plan": {"type": "array",
            "items": {"type": "object", "required": ["step"]}}}});
        let rules = StateRules::new(Some(&schema), 64).unwrap();
        let start = json!({});
        let good = [json!({"op": "add", "path": "/plan", "value": [{"step": "a"}]})];
        assert_eq!(
            rules.change(&start, &good).unwrap(),
            json!({"plan": [{"step": "a"}]})
        );
        let broken = [json!({"op": "add", "path": "/plan", "value": [{"title": "a"}]})];
        let problem = rules.change(&start, &broken).unwrap_err();
        assert_eq!(
            (problem.operation, problem.path.as_str()),
            (None, "/plan/0")
        );
        let missing = [json!({"op": "remove", "path": "/nothing"})];
        let problem = rules.change(&start, &missing).unwrap_err();
        assert_eq!(
            (problem.operation, problem.path.as_str()),
            (Some(0), "/nothing")
        );
        let big = [json!({"op": "add", "path": "/x", "value": "y".repeat(100)})];
        assert!(rules
            .change(&start, &big)
            .unwrap_err()
            .message
            .contains("--max-state-bytes"));
        let replaced = [json!({"op": "replace", "path": "", "value": [1]})];
        assert!(rules
            .change(&start, &replaced)
            .unwrap_err()
            .message
            .contains("object"));
        assert!(rules.change(&start, &[]).is_err());
        assert!(StateRules::new(Some(&json!({"type": 7})), 10).is_err());
    }

    #[test]
    fn one_depth_limit_holds_for_documents_and_the_values_patches_carry() {
        let rules = StateRules::new(None, 1 << 20).unwrap();
        let nested = |levels: usize| (0..levels).fold(json!(1), |inner, _| json!([inner]));
        let max = shared::nesting::MAX_DEPTH;
        let problem = rules.check(&json!({"a": nested(max)})).unwrap_err();
        assert!(problem.message.contains("at most 64"), "{problem}");
        assert!(rules.check(&json!({"a": nested(max - 1)})).is_ok());
        // A value deeper than any document may be is refused at its operation, even one
        // that would not end up in the document (a `test`).
        let patch = [
            json!({"op": "add", "path": "/a", "value": 1}),
            json!({"op": "test", "path": "/a", "value": nested(max + 1)}),
        ];
        let problem = rules.change(&json!({}), &patch).unwrap_err();
        assert_eq!((problem.operation, problem.path.as_str()), (Some(1), "/a"));
        let within = [json!({"op": "add", "path": "/a/b", "value": nested(max - 1)})];
        let problem = rules.change(&json!({"a": {}}), &within).unwrap_err();
        assert_eq!(problem.operation, None, "the document it makes is too deep");
    }
}
