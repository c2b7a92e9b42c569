//! The shared state: one JSON document per session, which the model and the person both
//! change. `STATE_SNAPSHOT` sets it whole, `STATE_DELTA` changes it with a JSON Patch
//! (RFC 6902); the server and the page fold the log's state events the same way, here.
//!
//! A state starts as `{}`, as AG-UI clients start theirs. A delta is checked against the
//! state it changes before it is logged, so folding the log never meets one that does not
//! apply; should it, the fold skips it rather than lose the rest.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::EventBody;

/// A session's shared state as far as its log has been folded.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedState {
    document: Value,
    /// The seq of the last state event folded in, if any.
    last_seq: Option<u64>,
}

impl Default for SharedState {
    fn default() -> Self {
        Self {
            document: empty(),
            last_seq: None,
        }
    }
}

impl SharedState {
    /// Folds in one event (any other than a state event changes nothing).
    pub fn observe(&mut self, seq: u64, body: &EventBody) {
        match body {
            EventBody::StateSnapshot { snapshot } => self.document = snapshot.clone(),
            EventBody::StateDelta { delta } => match apply(&self.document, delta) {
                Ok(document) => self.document = document,
                Err(_) => return,
            },
            _ => return,
        }
        self.last_seq = Some(seq);
    }

    /// The document.
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// The seq of the last state event folded in (`None`: the state was never set).
    pub fn last_seq(&self) -> Option<u64> {
        self.last_seq
    }

    /// Whether the document is still the empty object.
    pub fn is_empty(&self) -> bool {
        is_empty(&self.document)
    }
}

/// The state every session starts with: `{}`.
pub fn empty() -> Value {
    Value::Object(Map::new())
}

/// Whether a document is the empty object.
pub fn is_empty(document: &Value) -> bool {
    document.as_object().is_some_and(Map::is_empty)
}

/// Why a JSON Patch does not apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchFailure {
    /// The index of the operation that failed (0: the first).
    pub operation: usize,
    /// That operation's `path` (empty when the operation itself is malformed).
    pub path: String,
    /// What went wrong, in a sentence.
    pub message: String,
}

impl std::fmt::Display for PatchFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "operation {} (path \"{}\"): {}",
            self.operation, self.path, self.message
        )
    }
}

#[path = "state_patch.rs"]
mod patch;
pub use patch::apply_light;

/// The document `delta` makes of `document`: every operation applies, or none does. On
/// the page, [`apply_light`] (the same results in less WASM; the fuzz target `state_patch`
/// holds the two together).
#[cfg(target_arch = "wasm32")]
pub fn apply(document: &Value, delta: &[Value]) -> Result<Value, PatchFailure> {
    apply_light(document, delta)
}

/// The document `delta` makes of `document`: every operation applies, or none does
/// (the maintained `json-patch` crate, which checks every patch before it is logged).
#[cfg(not(target_arch = "wasm32"))]
pub fn apply(document: &Value, delta: &[Value]) -> Result<Value, PatchFailure> {
    let operations = delta
        .iter()
        .enumerate()
        .map(|(index, operation)| {
            serde_json::from_value::<json_patch::PatchOperation>(operation.clone()).map_err(
                |error| PatchFailure {
                    operation: index,
                    path: operation["path"].as_str().unwrap_or_default().to_string(),
                    message: format!("not a JSON Patch operation: {error}"),
                },
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut changed = document.clone();
    json_patch::patch(&mut changed, &operations).map_err(|error| PatchFailure {
        operation: error.operation,
        path: error.path.to_string(),
        message: error.kind.to_string(),
    })?;
    Ok(changed)
}

/// `GET` and `PATCH /api/sessions/{id}/state`: the session's shared state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StateBody {
    /// The document (`{}` until something sets it).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub state: Value,
    /// The seq of the event that last set or changed it; absent while it was never set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

/// One operation of the JSON Patch (RFC 6902) a `PATCH /api/sessions/{id}/state` body
/// lists (as documentation: the body is read as the patch it is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PatchOperation {
    /// `add`, `remove`, `replace`, `move`, `copy` or `test`.
    pub op: String,
    /// A JSON Pointer (RFC 6901) into the state.
    pub path: String,
    /// Where `move` and `copy` take the value from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The value of `add`, `replace` and `test`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub value: Option<Value>,
}

/// One step of a plan the state holds (`{"plan": [{"step", "status"}]}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanStep {
    /// What the step is.
    pub step: String,
    /// Its status as written (`pending`, `in_progress`, `done`, …).
    pub status: String,
}

impl PlanStep {
    /// Whether the step is finished (`done`, `completed` or `complete`).
    pub fn is_done(&self) -> bool {
        matches!(self.status.as_str(), "done" | "completed" | "complete")
    }
}

/// The plan a document holds, if its `plan` is a list of `{step, status}` objects (each
/// `step` a string; a missing `status` reads as `pending`).
pub fn plan(document: &Value) -> Option<Vec<PlanStep>> {
    document
        .get("plan")?
        .as_array()?
        .iter()
        .map(|item| {
            Some(PlanStep {
                step: item.get("step")?.as_str()?.to_string(),
                status: item
                    .get("status")
                    .and_then(Value::as_str)
                    .unwrap_or("pending")
                    .to_string(),
            })
        })
        .collect()
}

/// Whether `pointer` is a JSON Pointer (RFC 6901) to a member inside a document: not the
/// whole document, nor `/` (the member with an empty name, surely a mistake).
#[cfg(not(target_arch = "wasm32"))]
pub fn is_member_pointer(pointer: &str) -> bool {
    pointer != "/" && json_patch::jsonptr::Pointer::parse(pointer).is_ok_and(|p| !p.is_root())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn delta(operations: Value) -> EventBody {
        EventBody::StateDelta {
            delta: operations.as_array().unwrap().clone(),
        }
    }

    #[test]
    fn snapshots_and_deltas_fold_in_order() {
        let mut state = SharedState::default();
        assert!(state.is_empty());
        state.observe(3, &delta(json!([{"op": "add", "path": "/a", "value": 1}])));
        state.observe(
            5,
            &EventBody::StateSnapshot {
                snapshot: json!({"plan": [{"step": "x", "status": "pending"}]}),
            },
        );
        state.observe(
            8,
            &delta(json!([{"op": "replace", "path": "/plan/0/status", "value": "done"}])),
        );
        state.observe(
            9,
            &EventBody::StepStarted {
                step_name: "s".into(),
            },
        );
        assert_eq!(
            state.document(),
            &json!({"plan": [{"step": "x", "status": "done"}]})
        );
        assert_eq!(state.last_seq(), Some(8));
        let steps = plan(state.document()).unwrap();
        assert!(steps[0].is_done());
    }

    #[test]
    fn a_failing_operation_changes_nothing_and_names_itself() {
        let document = json!({"a": 1});
        let failure = apply(
            &document,
            json!([{"op": "add", "path": "/b", "value": 2}, {"op": "remove", "path": "/zz"}])
                .as_array()
                .unwrap(),
        )
        .unwrap_err();
        assert_eq!((failure.operation, failure.path.as_str()), (1, "/zz"));
        let malformed = apply(&document, &[json!({"op": "frobnicate", "path": "/a"})]);
        assert_eq!(malformed.unwrap_err().operation, 0);
        let mut state = SharedState::default();
        state.observe(
            1,
            &EventBody::StateSnapshot {
                snapshot: document.clone(),
            },
        );
        state.observe(2, &delta(json!([{"op": "remove", "path": "/zz"}])));
        assert_eq!((state.document(), state.last_seq()), (&document, Some(1)));
    }

    #[test]
    fn the_page_s_patch_agrees_with_the_crate() {
        let document = json!({"a": {"b": [1, 2, 3]}, "c~d": {"e/f": true}, "s": "x"});
        let patches = [
            json!([{"op": "add", "path": "/a/b/-", "value": 4}]),
            json!([{"op": "add", "path": "/a/b/0", "value": 0}]),
            json!([{"op": "add", "path": "/a/b/9", "value": 0}]),
            json!([{"op": "add", "path": "/a/b/01", "value": 0}]),
            json!([{"op": "remove", "path": "/a/b/1"}, {"op": "remove", "path": "/c~0d/e~1f"}]),
            json!([{"op": "remove", "path": ""}]),
            json!([{"op": "replace", "path": "", "value": {"new": 1}}]),
            json!([{"op": "replace", "path": "/nope", "value": 1}]),
            json!([{"op": "move", "from": "/a/b", "path": "/b"}]),
            json!([{"op": "move", "from": "/a", "path": "/a/x"}]),
            json!([{"op": "copy", "from": "/a/b/2", "path": "/z"}]),
            json!([{"op": "test", "path": "/s", "value": "x"}, {"op": "test", "path": "/s", "value": "y"}]),
            json!([{"op": "add", "path": "/s/x", "value": 1}]),
            json!([{"op": "add", "path": "s", "value": 1}]),
            json!([{"op": "frob", "path": "/s"}]),
            // A `~` that is neither `~0` nor `~1` makes no pointer (found by the fuzz target).
            json!([{"op": "add", "path": "/a~b", "value": 4}]),
            json!([{"op": "add", "path": "/a~", "value": 4}]),
            json!([{"op": "test", "path": "/c~2d", "value": 4}]),
            json!([{"op": "add", "path": "/c~01", "value": 4}]),
        ];
        for patch in patches {
            let patch = patch.as_array().unwrap();
            match (apply(&document, patch), apply_light(&document, patch)) {
                (Ok(crate_made), Ok(light)) => assert_eq!(crate_made, light, "{patch:?}"),
                (Err(a), Err(b)) => assert_eq!(a.operation, b.operation, "{patch:?}"),
                (crate_made, light) => panic!("{patch:?}: {crate_made:?} vs {light:?}"),
            }
        }
    }

    #[test]
    fn a_plan_needs_every_step_to_be_one() {
        assert_eq!(
            plan(&json!({"plan": [{"step": "a"}]})).unwrap()[0].status,
            "pending"
        );
        assert_eq!(
            plan(&json!({"plan": [{"step": "a"}, {"title": "b"}]})),
            None
        );
        assert_eq!(plan(&json!({"plan": "soon"})), None);
    }
}
