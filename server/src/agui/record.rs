//! What a run's `RUN_STARTED.input` keeps of an AG-UI input: what the run reads and
//! nothing else, so the log (and every viewer of the session) holds no more of a
//! client's input than the run needs.
//!
//! Kept: `threadId` and `runId` (a retry finds its run by them), the messages new to the
//! log (the conversation reads them, `shared::run_input`), `tools` (the client's tools,
//! `agent::client_tools`), `context` (appended to the system prompt,
//! `agent::conversation`), `state` (the client's shared state, which the run adopts
//! when it differs from the session's: `agent::shared_state`) and `resume` if present.
//! `forwardedProps` is written as `{}` so the record stays a valid `RunAgentInput`, as is
//! a `state` that is not an object (a model picked in
//! `forwardedProps.model` is recorded as `CUSTOM tandem.model_selected`); any other
//! top-level key is dropped, and no field is `null` (AG-UI clients refuse them).

use serde_json::{json, Map, Value};

use super::input::InputMessage;

/// The record of `raw` (the input as it arrived) whose new messages are `new_messages`.
pub fn recorded_input(raw: &Map<String, Value>, new_messages: &[InputMessage]) -> Value {
    let ids: Vec<&str> = new_messages.iter().map(|m| m.id.as_str()).collect();
    let messages: Vec<Value> = raw
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|m| m["id"].as_str().is_some_and(|id| ids.contains(&id)))
        .cloned()
        .collect();
    let kept = |key: &str, empty: Value| {
        raw.get(key)
            .filter(|value| !value.is_null())
            .cloned()
            .unwrap_or(empty)
    };
    let mut recorded = Map::new();
    recorded.insert("threadId".into(), kept("threadId", Value::Null));
    recorded.insert("runId".into(), kept("runId", Value::Null));
    recorded.insert("messages".into(), Value::Array(messages));
    recorded.insert("tools".into(), kept("tools", json!([])));
    recorded.insert("context".into(), kept("context", json!([])));
    let state = raw.get("state").filter(|state| state.is_object());
    recorded.insert("state".into(), state.cloned().unwrap_or_else(|| json!({})));
    recorded.insert("forwardedProps".into(), json!({}));
    if let Some(resume) = raw.get("resume").filter(|value| !value.is_null()) {
        recorded.insert("resume".into(), resume.clone());
    }
    Value::Object(recorded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: &str) -> InputMessage {
        serde_json::from_value(json!({"id": id, "role": "user", "content": "Hi"})).unwrap()
    }

    #[test]
    fn the_record_keeps_what_the_run_reads_and_nothing_else() {
        let raw = json!({
            "threadId": "t", "runId": "r", "parentRunId": null,
            "messages": [{"id": "old", "role": "user", "content": "Before"},
                         {"id": "new", "role": "user", "content": "Hi"}],
            "tools": [{"name": "show_card"}], "context": [{"description": "d", "value": "v"}],
            "state": {"secret": "s"}, "forwardedProps": {"model": "m", "other": "o"},
            "resume": [{"interruptId": "int_1", "status": "resolved"}],
            "somethingNew": {"big": "x"},
        });
        let recorded = recorded_input(raw.as_object().unwrap(), &[message("new")]);
        assert_eq!(
            recorded,
            json!({
                "threadId": "t", "runId": "r",
                "messages": [{"id": "new", "role": "user", "content": "Hi"}],
                "tools": [{"name": "show_card"}], "context": [{"description": "d", "value": "v"}],
                "state": {"secret": "s"}, "forwardedProps": {},
                "resume": [{"interruptId": "int_1", "status": "resolved"}],
            })
        );
    }

    #[test]
    fn missing_or_null_fields_are_recorded_empty() {
        let raw = json!({"threadId": "t", "runId": "r", "tools": null, "resume": null});
        let recorded = recorded_input(raw.as_object().unwrap(), &[]);
        assert_eq!(
            recorded,
            json!({"threadId": "t", "runId": "r", "messages": [], "tools": [], "context": [],
                   "state": {}, "forwardedProps": {}})
        );
    }
}
