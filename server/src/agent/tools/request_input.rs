//! `request_input`: the tool a model calls to ask a person something.
//!
//! This module owns the request's validation, the interrupt it becomes (with a
//! `responseSchema` derived from its kind) and the checks an answer must pass. It does
//! not pause anything itself: the run loop ends the run with the interrupt.

use serde_json::{json, Value};
use shared::{InputKind, InputRequest, Interrupt, ResumeStatus};

use super::schema::{self, SchemaLimits};
use super::ToolSpec;
use crate::domain::{new_id, rfc3339_after};

/// The tool's name.
pub const NAME: &str = "request_input";
/// The interrupt reason Tandem uses.
pub const REASON: &str = "input_required";

/// The tool as offered to the model.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME.into(),
        description: "Ask the person a question and wait for the answer. Use kind `text` for \
                      free text, `choice` with `choices` to pick one, `confirm` for an \
                      approval, `form` with a JSON Schema `schema` for several fields."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "prompt": {"type": "string", "minLength": 1},
                "kind": {"type": "string", "enum": ["text", "choice", "confirm", "form"]},
                "choices": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "schema": {"type": "object"},
                "timeoutSeconds": {"type": "integer", "minimum": 1}
            },
            "required": ["prompt", "kind"],
            "additionalProperties": false
        }),
    }
}

/// Parses and checks the model's arguments; the answer's schema must fit `limits`.
pub fn parse(arguments: &str, limits: &SchemaLimits) -> Result<InputRequest, String> {
    let value = super::parse_arguments(arguments)?;
    let request: InputRequest = serde_json::from_value(value)
        .map_err(|e| format!("invalid arguments for `{NAME}`: {e}"))?;
    if request.prompt.trim().is_empty() {
        return Err("`prompt` must not be empty".into());
    }
    match request.kind {
        InputKind::Choice => {
            let choices = request.choices.as_deref().unwrap_or_default();
            if choices.is_empty() || choices.iter().any(|c| c.trim().is_empty()) {
                return Err("kind `choice` needs a non-empty `choices` list of labels".into());
            }
        }
        InputKind::Form => {
            let schema = request.schema.as_ref();
            let has_properties = schema
                .and_then(|s| s.get("properties"))
                .is_some_and(Value::is_object);
            if !has_properties {
                return Err("kind `form` needs a `schema` object with `properties`".into());
            }
        }
        InputKind::Text | InputKind::Confirm => {}
    }
    let answer_schema = response_schema(&request);
    limits
        .check(&answer_schema)
        .and_then(|()| schema::compile(&answer_schema).map(drop))
        .map_err(|problem| format!("the question's answer schema was refused: {problem}"))?;
    Ok(request)
}

/// The JSON Schema an answer's payload must satisfy.
pub fn response_schema(request: &InputRequest) -> Value {
    match request.kind {
        InputKind::Text => json!({
            "type": "object",
            "properties": {"text": {"type": "string", "minLength": 1}},
            "required": ["text"],
            "additionalProperties": false
        }),
        InputKind::Choice => json!({
            "type": "object",
            "properties": {"choice": {"type": "string", "enum": request.choices}},
            "required": ["choice"],
            "additionalProperties": false
        }),
        InputKind::Confirm => json!({
            "type": "object",
            "properties": {"approved": {"type": "boolean"}, "comment": {"type": "string"}},
            "required": ["approved"],
            "additionalProperties": false
        }),
        InputKind::Form => {
            let mut schema = request.schema.clone().unwrap_or_else(|| json!({}));
            if let Some(object) = schema.as_object_mut() {
                object.entry("type").or_insert_with(|| json!("object"));
            }
            schema
        }
    }
}

/// The interrupt a request becomes; `default_timeout` (seconds) applies when the request
/// sets no `timeoutSeconds`.
pub fn interrupt(
    request: &InputRequest,
    tool_call_id: &str,
    default_timeout: Option<u64>,
) -> Interrupt {
    let mut metadata = json!({"kind": request.kind});
    if let Some(choices) = &request.choices {
        metadata["choices"] = json!(choices);
    }
    if let Some(schema) = &request.schema {
        metadata["schema"] = schema.clone();
    }
    Interrupt {
        id: new_id("int"),
        reason: REASON.into(),
        message: Some(request.prompt.clone()),
        tool_call_id: Some(tool_call_id.into()),
        response_schema: Some(response_schema(request)),
        expires_at: request
            .timeout_seconds
            .or(default_timeout)
            .map(rfc3339_after),
        metadata: Some(metadata),
    }
}

/// The answer as stored and as the tool result: `{"status", "payload"?}`.
pub fn answer(status: ResumeStatus, payload: Option<Value>) -> Value {
    match (status, payload) {
        (ResumeStatus::Resolved, Some(payload)) => {
            json!({"status": "resolved", "payload": payload})
        }
        (ResumeStatus::Resolved, None) => json!({"status": "resolved"}),
        (ResumeStatus::Cancelled, _) => json!({"status": "cancelled"}),
    }
}

/// Checks a resolved answer's payload against the interrupt's `responseSchema`.
pub fn check_payload(interrupt: &Interrupt, payload: Option<&Value>) -> Result<(), String> {
    let payload = payload.ok_or("a resolved answer needs a `payload`")?;
    let Some(schema) = &interrupt.response_schema else {
        return Ok(());
    };
    let validator = schema::compile(schema)?;
    let problems: Vec<String> = validator
        .iter_errors(payload)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(arguments: &str) -> Result<InputRequest, String> {
        super::parse(arguments, &SchemaLimits::default())
    }

    fn request(args: Value) -> InputRequest {
        parse(&args.to_string()).unwrap()
    }

    #[test]
    fn choice_schema_is_an_enum_of_the_choices() {
        let req = request(json!({"prompt": "Where?", "kind": "choice", "choices": ["A", "B"]}));
        let interrupt = interrupt(&req, "c1", None);
        assert_eq!(
            interrupt.response_schema.as_ref().unwrap()["properties"]["choice"]["enum"],
            json!(["A", "B"])
        );
        assert!(check_payload(&interrupt, Some(&json!({"choice": "A"}))).is_ok());
        assert!(check_payload(&interrupt, Some(&json!({"choice": "C"}))).is_err());
        assert!(check_payload(&interrupt, None).is_err());
    }

    #[test]
    fn confirm_accepts_an_optional_comment_only() {
        let req = request(json!({"prompt": "Delete?", "kind": "confirm"}));
        let interrupt = interrupt(&req, "c1", None);
        assert!(check_payload(&interrupt, Some(&json!({"approved": true}))).is_ok());
        assert!(check_payload(
            &interrupt,
            Some(&json!({"approved": false, "comment": "no"}))
        )
        .is_ok());
        assert!(check_payload(&interrupt, Some(&json!({"approved": "yes"}))).is_err());
        assert!(check_payload(&interrupt, Some(&json!({"approved": true, "x": 1}))).is_err());
    }

    #[test]
    fn bad_requests_are_explained() {
        assert!(parse(r#"{"prompt":"x","kind":"choice"}"#)
            .unwrap_err()
            .contains("choices"));
        assert!(parse(r#"{"prompt":"x","kind":"form"}"#)
            .unwrap_err()
            .contains("properties"));
        assert!(parse(r#"{"prompt":"x","kind":"guess"}"#).is_err());
        assert!(parse(r#"{"prompt":" ","kind":"text"}"#).is_err());
    }

    #[test]
    fn hostile_form_schemas_are_refused() {
        let mut deep = json!({"type": "string"});
        for _ in 0..40 {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        let args = json!({"prompt": "x", "kind": "form", "schema": deep});
        assert!(parse(&args.to_string()).unwrap_err().contains("deeper"));
        let wide: serde_json::Map<String, Value> = (0..2000)
            .map(|i| (format!("field{i}"), json!({"type": "string"})))
            .collect();
        let args = json!({"prompt": "x", "kind": "form", "schema": {"properties": wide}});
        assert!(parse(&args.to_string()).unwrap_err().contains("bytes"));
        let choices: Vec<String> = (0..5000).map(|i| format!("option {i}")).collect();
        let args = json!({"prompt": "x", "kind": "choice", "choices": choices});
        assert!(parse(&args.to_string()).is_err());
    }

    #[test]
    fn expiry_is_rfc3339() {
        let req = request(json!({"prompt": "x", "kind": "text", "timeoutSeconds": 60}));
        let expires = interrupt(&req, "c", None).expires_at.unwrap();
        assert!(chrono::DateTime::parse_from_rfc3339(&expires).is_ok());
    }
}
