//! The `RunAgentInput` an AG-UI client posts, parsed and checked before anything is
//! read or written: ids, roles, the tools it declares, its resume entries.
//!
//! Only what Tandem acts on is typed; the rest (`state`, `context`, `forwardedProps`,
//! fields of later protocol versions) is kept as the client sent it, for its sizes to be
//! checked (`agui::limits`) and what a run needs of it to be recorded (`agui::record`).

use serde::Deserialize;
use serde_json::{Map, Value};
use shared::ResumeStatus;

use crate::error::ApiError;

/// Most tools one input may declare.
const MAX_TOOLS: usize = 64;
/// Longest message, run or tool-call id accepted, in bytes.
pub const MAX_ID: usize = 128;
/// Longest tool description accepted, in characters.
const MAX_DESCRIPTION: usize = 4096;

/// A `RunAgentInput`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAgentInput {
    pub thread_id: String,
    pub run_id: String,
    #[serde(default)]
    pub messages: Vec<InputMessage>,
    #[serde(default)]
    pub tools: Vec<DeclaredTool>,
    #[serde(default)]
    pub resume: Vec<ResumeEntry>,
}

/// One message of the client's conversation. Only the fields Tandem reads are typed;
/// `content` is a string, or for a user message a list of parts.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputMessage {
    pub id: String,
    pub role: String,
    #[serde(default)]
    pub content: Option<Value>,
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
}

/// A tool the client declares (a "frontend tool"): the model may call it, the client
/// runs it.
#[derive(Debug, Clone, Deserialize)]
pub struct DeclaredTool {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub parameters: Option<Value>,
}

/// An answer to a pending interrupt.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeEntry {
    pub interrupt_id: String,
    pub status: ResumeStatus,
    #[serde(default)]
    pub payload: Option<Value>,
}

impl InputMessage {
    /// The text of a user or tool message: a string, or a user message's text parts
    /// joined (its `binary`, `image`, `document`, `audio` and `video` parts are files:
    /// [`super::binary`]). Other parts are refused.
    pub fn text(&self) -> Result<String, ApiError> {
        match &self.content {
            None => Ok(String::new()),
            Some(Value::String(text)) => Ok(text.clone()),
            Some(Value::Array(parts)) if self.role == "user" => {
                let mut text = String::new();
                for part in parts {
                    match (part["type"].as_str(), part["text"].as_str()) {
                        (Some("text"), Some(piece)) => text.push_str(piece),
                        (Some(kind), _) if super::binary::FILE_PARTS.contains(&kind) => {}
                        _ => {
                            return Err(invalid(format!(
                                "message {}: only text and file parts (binary, image, document, audio, video) are supported",
                                self.id
                            )))
                        }
                    }
                }
                Ok(text)
            }
            Some(_) => Err(invalid(format!(
                "message {}: content must be a string",
                self.id
            ))),
        }
    }
}

/// Parses and checks an input; also returns it as the JSON object it arrived as.
pub fn from_value(raw: Value) -> Result<(RunAgentInput, Map<String, Value>), ApiError> {
    let Value::Object(object) = raw else {
        return Err(ApiError::BadRequest(
            "the body must be a RunAgentInput object".into(),
        ));
    };
    let input: RunAgentInput = serde_json::from_value(Value::Object(object.clone()))
        .map_err(|e| ApiError::BadRequest(format!("not a RunAgentInput: {e}")))?;
    check(&input)?;
    Ok((input, object))
}

fn check(input: &RunAgentInput) -> Result<(), ApiError> {
    check_run_id(&input.run_id)?;
    for message in &input.messages {
        check_id("message id", &message.id)?;
        const ROLES: [&str; 7] = [
            "user",
            "assistant",
            "tool",
            "system",
            "developer",
            "reasoning",
            "activity",
        ];
        if !ROLES.contains(&message.role.as_str()) {
            return Err(invalid(format!(
                "message {}: unknown role `{}`",
                message.id, message.role
            )));
        }
        if message.role == "tool" {
            let call = message.tool_call_id.as_deref().unwrap_or_default();
            check_id("toolCallId", call)?;
        }
    }
    if input.tools.len() > MAX_TOOLS {
        return Err(invalid(format!("at most {MAX_TOOLS} tools per input")));
    }
    for (i, tool) in input.tools.iter().enumerate() {
        check_tool(tool)?;
        if input.tools[..i].iter().any(|t| t.name == tool.name) {
            return Err(invalid(format!("tool `{}` is declared twice", tool.name)));
        }
    }
    for entry in &input.resume {
        check_id("interruptId", &entry.interrupt_id)?;
    }
    Ok(())
}

fn check_tool(tool: &DeclaredTool) -> Result<(), ApiError> {
    let name_ok = !tool.name.is_empty()
        && tool.name.len() <= 64
        && tool
            .name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !name_ok {
        return Err(invalid(format!(
            "tool name `{}` must be 1 to 64 letters, digits, `_` or `-`",
            tool.name.chars().take(80).collect::<String>()
        )));
    }
    if tool.description.chars().count() > MAX_DESCRIPTION {
        return Err(invalid(format!(
            "tool `{}`: description longer than {MAX_DESCRIPTION} characters",
            tool.name
        )));
    }
    if let Some(parameters) = &tool.parameters {
        if !parameters.is_object() {
            return Err(invalid(format!(
                "tool `{}`: parameters must be a JSON Schema object",
                tool.name
            )));
        }
        crate::agent::tools::schema::compile(parameters)
            .map_err(|e| invalid(format!("tool `{}`: parameters: {e}", tool.name)))?;
    }
    Ok(())
}

fn check_id(what: &str, id: &str) -> Result<(), ApiError> {
    if id.is_empty() || id.len() > MAX_ID || id.chars().any(char::is_control) {
        return Err(ApiError::BadRequest(format!(
            "{what} must be 1 to {MAX_ID} bytes without control characters"
        )));
    }
    Ok(())
}

/// A client's `runId` becomes the id of the run it starts (so the client can correlate
/// `RUN_STARTED.runId`): 1 to 128 letters, digits, `-`, `_`, `.` or `:` (a UUID fits).
fn check_run_id(id: &str) -> Result<(), ApiError> {
    let fits = !id.is_empty()
        && id.len() <= MAX_ID
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'));
    if !fits {
        return Err(ApiError::BadRequest(format!(
            "runId must be 1 to {MAX_ID} letters, digits, `-`, `_`, `.` or `:` (it becomes the run's id)"
        )));
    }
    Ok(())
}

fn invalid(message: String) -> ApiError {
    ApiError::InvalidMessage(message)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parsed(value: Value) -> Result<RunAgentInput, ApiError> {
        from_value(value).map(|(input, _)| input)
    }

    #[test]
    fn a_client_input_parses_with_fields_tandem_does_not_read() {
        let input = parsed(json!({
            "threadId": "t", "runId": "r", "state": {}, "context": [], "forwardedProps": {},
            "protocolVersion": "1.0.0",
            "messages": [{"id": "m1", "role": "user", "content": [{"type": "text", "text": "Hi"}]}],
            "tools": [{"name": "show_card", "description": "Shows", "parameters": {"type": "object"}}],
        }))
        .unwrap();
        assert_eq!(input.messages[0].text().unwrap(), "Hi");
        assert_eq!(input.tools[0].name, "show_card");
    }

    #[test]
    fn bad_inputs_are_refused_with_what_to_fix() {
        let base = || json!({"threadId": "t", "runId": "r", "messages": []});
        let mut no_run = base();
        no_run.as_object_mut().unwrap().remove("runId");
        let cases = [
            (no_run, "runId"),
            (json!([1]), "object"),
            (
                json!({"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "robot"}]}),
                "unknown role",
            ),
            (
                json!({"threadId": "t", "runId": "r", "tools": [{"name": "a b"}]}),
                "tool name",
            ),
            (
                json!({"threadId": "t", "runId": "r", "tools": [{"name": "a"}, {"name": "a"}]}),
                "twice",
            ),
            (
                json!({"threadId": "t", "runId": "r", "tools": [{"name": "a", "parameters": {"type": 7}}]}),
                "parameters",
            ),
            (
                json!({"threadId": "t", "runId": "", "messages": []}),
                "runId",
            ),
            (
                json!({"threadId": "t", "runId": "a run", "messages": []}),
                "runId",
            ),
            (
                json!({"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "tool", "content": "x"}]}),
                "toolCallId",
            ),
        ];
        for (body, expected) in cases {
            let error = parsed(body.clone()).unwrap_err().to_string();
            assert!(error.contains(expected), "{body}: {error}");
        }
        let audio =
            json!({"id": "m", "role": "user", "content": [{"type": "sticker", "data": "x"}]});
        let message: InputMessage = serde_json::from_value(audio).unwrap();
        assert!(message.text().is_err());
        let image = json!({"id": "m", "role": "user", "content": [
            {"type": "text", "text": "Look"}, {"type": "binary", "mimeType": "image/png", "id": "att_1"}]});
        let message: InputMessage = serde_json::from_value(image).unwrap();
        assert_eq!(message.text().unwrap(), "Look");
    }
}
