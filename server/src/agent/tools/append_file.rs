//! The `append_file` tool: appends one line to a text file in the caller's workspace.
//!
//! It changes things and is not idempotent (running it twice appends twice), so it needs
//! approval by default and is never re-run after a crash cut it short.

use std::sync::Arc;

use serde_json::{json, Value};

use super::workspace::{check_file_arguments, Workspaces, WriteMode, MAX_PATH_BYTES};
use super::{Tool, ToolCall, ToolContext, ToolSpec};

/// Longest line, in bytes.
const MAX_LINE_BYTES: usize = 64 * 1024;

/// Appends lines to files in users' workspaces.
pub struct AppendFile {
    workspaces: Arc<Workspaces>,
}

impl AppendFile {
    /// A tool that appends in `workspaces`.
    pub fn new(workspaces: Arc<Workspaces>) -> Self {
        Self { workspaces }
    }
}

impl Tool for AppendFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "append_file".into(),
            description: "Append one line to a UTF-8 text file in the workspace, creating it if \
                          needed. `path` is relative to the workspace."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "minLength": 1, "maxLength": MAX_PATH_BYTES},
                    "line": {"type": "string", "maxLength": MAX_LINE_BYTES, "pattern": "^[^\\n]*$"}
                },
                "required": ["path", "line"],
                "additionalProperties": false
            }),
        }
    }

    fn changes_things(&self) -> bool {
        true
    }

    fn check(&self, arguments: &Value) -> Result<(), String> {
        check_file_arguments(arguments, "line", MAX_LINE_BYTES)
    }

    fn call(&self, arguments: Value, context: &ToolContext) -> ToolCall {
        let path = arguments["path"].as_str().unwrap_or_default().to_string();
        let line = arguments["line"].as_str().unwrap_or_default().to_string();
        let (workspaces, user) = (self.workspaces.clone(), context.user.clone());
        Box::pin(async move {
            let bytes = format!("{line}\n").into_bytes();
            workspaces
                .write(&user, &path, bytes, WriteMode::Append)
                .await?;
            Ok(json!({"appended": path}))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::UserName;

    #[tokio::test]
    async fn each_call_appends_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let tool = AppendFile::new(Arc::new(Workspaces::new(dir.path().to_path_buf(), 1 << 20)));
        let context = ToolContext {
            user: UserName::parse("ann").unwrap(),
            session: crate::domain::SessionId::generate(),
            owner: crate::domain::UserId::LOCAL,
        };
        for line in ["one", "two"] {
            tool.call(json!({"path": "log.txt", "line": line}), &context)
                .await
                .unwrap();
        }
        let text = std::fs::read_to_string(dir.path().join("ann/log.txt")).unwrap();
        assert_eq!(text, "one\ntwo\n");
    }
}
