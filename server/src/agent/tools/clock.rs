//! The `clock` tool: the current date and time in UTC.

use serde_json::{json, Value};

use super::{Tool, ToolCall, ToolSpec};

/// Tells the time.
pub struct Clock;

impl Tool for Clock {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "clock".into(),
            description: "The current date and time (UTC).".into(),
            parameters: json!({"type": "object", "properties": {}, "additionalProperties": false}),
        }
    }

    fn call(&self, _arguments: Value, _: &super::ToolContext) -> ToolCall {
        let now = chrono::Utc::now();
        Box::pin(async move {
            Ok(json!({
                "utc": now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                "date": now.format("%A, %-d %B %Y").to_string(),
                "time": now.format("%H:%M").to_string(),
            }))
        })
    }
}
