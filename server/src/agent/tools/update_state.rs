//! `update_state`: the tool a model calls to change the session's shared state.
//!
//! Like `request_input` it is offered here and handled by the run itself
//! (`agent/shared_state/in_run.rs`): a change is an event of the log, made against the
//! state it was computed from, which no registered tool can do.

use serde_json::{json, Value};

use super::ToolSpec;

/// The tool's name.
pub const NAME: &str = "update_state";

/// The tool as offered to the model.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME.into(),
        description: "Change the shared state the person sees beside the conversation (a \
                      JSON object; its current value is in the system prompt). Give a JSON \
                      Patch (RFC 6902) as `patch`. Keep a plan as {\"plan\": [{\"step\": \
                      \"…\", \"status\": \"pending\" | \"in_progress\" | \"done\"}]}: the \
                      person sees it as a checklist and may tick steps off."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "patch": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "op": {"type": "string",
                                   "enum": ["add", "remove", "replace", "move", "copy", "test"]},
                            "path": {"type": "string"},
                            "from": {"type": "string"},
                            "value": {}
                        },
                        "required": ["op", "path"]
                    }
                }
            },
            "required": ["patch"],
            "additionalProperties": false
        }),
    }
}

/// The patch in the model's arguments.
pub fn parse(arguments: &str) -> Result<Vec<Value>, String> {
    let value = super::parse_arguments(arguments)?;
    match value.get("patch").and_then(Value::as_array) {
        Some(patch) if !patch.is_empty() => Ok(patch.clone()),
        _ => Err(format!(
            "invalid arguments for `{NAME}`: `patch` must be a non-empty list of JSON Patch operations"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_is_a_non_empty_list() {
        let ok = parse(r#"{"patch":[{"op":"add","path":"/a","value":1}]}"#).unwrap();
        assert_eq!(ok.len(), 1);
        assert!(parse(r#"{"patch":[]}"#).is_err());
        assert!(parse(r#"{"patch":{}}"#).is_err());
        assert!(parse("not json").is_err());
        assert!(jsonschema::validator_for(&spec().parameters).is_ok());
    }
}
