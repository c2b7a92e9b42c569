//! The messages an AG-UI client's `RunAgentInput` brought to a run, read back from the
//! run's `RUN_STARTED.input`, where the log records them.
//!
//! A run started over AG-UI's HTTP transport does not repeat the client's new messages as
//! `TEXT_MESSAGE_*` or `TOOL_CALL_RESULT` events: the client already holds them, and
//! would append their text a second time. The server's conversation, the page's
//! transcript and anything else that reads the log take them from here instead.

use serde_json::Value;

/// One message of a run's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputMessage {
    /// Something the person wrote.
    User { id: String, text: String },
    /// The result of a tool call the client ran.
    ToolResult {
        id: String,
        tool_call_id: String,
        content: String,
    },
}

/// The user and tool messages of a `RUN_STARTED.input`, in order; other roles and
/// malformed entries are skipped.
pub fn input_messages(input: Option<&Value>) -> Vec<InputMessage> {
    let messages = input.and_then(|input| input.get("messages"));
    let messages = messages.and_then(Value::as_array).into_iter().flatten();
    messages
        .filter_map(|message| {
            let id = message.get("id")?.as_str()?.to_string();
            match message.get("role")?.as_str()? {
                "user" => Some(InputMessage::User {
                    id,
                    text: text_of(message.get("content")?),
                }),
                "tool" => Some(InputMessage::ToolResult {
                    id,
                    tool_call_id: message.get("toolCallId")?.as_str()?.to_string(),
                    content: message.get("content").map(text_of).unwrap_or_default(),
                }),
                _ => None,
            }
        })
        .collect()
}

/// A content string, or the text parts of a list of parts, joined.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn user_and_tool_messages_come_back_in_order() {
        let input = json!({"messages": [
            {"id": "u1", "role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]},
            {"id": "a1", "role": "assistant", "content": "skipped"},
            {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "shown"},
            {"role": "user", "content": "no id: skipped"},
        ]});
        assert_eq!(
            input_messages(Some(&input)),
            [
                InputMessage::User {
                    id: "u1".into(),
                    text: "Hi there".into()
                },
                InputMessage::ToolResult {
                    id: "t1".into(),
                    tool_call_id: "c1".into(),
                    content: "shown".into()
                },
            ]
        );
        assert!(input_messages(None).is_empty());
    }
}
