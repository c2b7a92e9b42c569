//! The `write_file` tool: writes a text file in the caller's workspace folder.
//!
//! It changes things, so it needs a person's approval by default; writing the same file
//! twice gives the same result, so it is idempotent. Where it may write is decided by
//! [`super::workspace`].

use std::sync::Arc;

use serde_json::{json, Value};

use super::workspace::{check_file_arguments, Workspaces, WriteMode, MAX_PATH_BYTES};
use super::{Tool, ToolCall, ToolContext, ToolSpec};

/// Largest file the tool writes, in bytes.
pub const MAX_CONTENT_BYTES: usize = 1024 * 1024;

/// Writes files in users' workspaces.
pub struct WriteFile {
    workspaces: Arc<Workspaces>,
}

impl WriteFile {
    /// A tool that writes in `workspaces`.
    pub fn new(workspaces: Arc<Workspaces>) -> Self {
        Self { workspaces }
    }
}

impl Tool for WriteFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "write_file".into(),
            description: "Write a UTF-8 text file in the workspace, replacing it if it exists. \
                          `path` is relative to the workspace."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "minLength": 1, "maxLength": MAX_PATH_BYTES},
                    "content": {"type": "string", "maxLength": MAX_CONTENT_BYTES}
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        }
    }

    fn changes_things(&self) -> bool {
        true
    }

    fn idempotent(&self) -> bool {
        true
    }

    fn check(&self, arguments: &Value) -> Result<(), String> {
        check_file_arguments(arguments, "content", MAX_CONTENT_BYTES)
    }

    fn call(&self, arguments: Value, context: &ToolContext) -> ToolCall {
        let path = arguments["path"].as_str().unwrap_or_default().to_string();
        let content = arguments["content"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let (workspaces, user) = (self.workspaces.clone(), context.user.clone());
        Box::pin(async move {
            let bytes = workspaces
                .write(&user, &path, content.into_bytes(), WriteMode::Replace)
                .await?;
            Ok(json!({"written": path, "bytes": bytes}))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::UserName;

    #[tokio::test]
    async fn writes_the_file_in_the_callers_folder() {
        let dir = tempfile::tempdir().unwrap();
        let tool = WriteFile::new(Arc::new(Workspaces::new(dir.path().to_path_buf(), 1 << 20)));
        let context = ToolContext {
            user: UserName::parse("ann").unwrap(),
            session: crate::domain::SessionId::generate(),
            owner: crate::domain::UserId::LOCAL,
        };
        let result = tool
            .call(json!({"path": "n/note.txt", "content": "hi"}), &context)
            .await
            .unwrap();
        assert_eq!(result["bytes"], 2);
        let text = std::fs::read_to_string(dir.path().join("ann/n/note.txt")).unwrap();
        assert_eq!(text, "hi");
        assert!(tool.check(&json!({"path": ".env", "content": ""})).is_err());
        let big = "é".repeat(MAX_CONTENT_BYTES / 2 + 1);
        assert!(
            tool.check(&json!({"path": "a", "content": big})).is_err(),
            "bytes, not chars"
        );
    }
}
