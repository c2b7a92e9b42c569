//! The `append_file` tool: appends one line to a text file inside the workspace folder.
//!
//! It changes things and is not idempotent (running it twice appends twice), so it needs
//! approval by default and is never re-run after a crash cut it short.

use std::path::PathBuf;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use super::write_file::{inside, with_folder};
use super::{Tool, ToolSpec};

/// Appends lines to files under one folder.
pub struct AppendFile {
    workspace: PathBuf,
}

impl AppendFile {
    /// A tool that appends under `workspace` (created on first write).
    pub fn new(workspace: PathBuf) -> Self {
        Self { workspace }
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
                    "path": {"type": "string", "minLength": 1, "maxLength": 255},
                    "line": {"type": "string", "maxLength": 65536, "pattern": "^[^\\n]*$"}
                },
                "required": ["path", "line"],
                "additionalProperties": false
            }),
        }
    }

    fn changes_things(&self) -> bool {
        true
    }

    fn call(&self, arguments: Value) -> BoxFuture<'static, Result<Value, String>> {
        let path = arguments["path"].as_str().unwrap_or_default().to_string();
        let line = arguments["line"].as_str().unwrap_or_default().to_string();
        let target = inside(&self.workspace, &path);
        Box::pin(async move {
            let target = with_folder(target?, &path).await?;
            let mut file = tokio::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&target)
                .await
                .map_err(|e| format!("cannot open `{path}`: {e}"))?;
            file.write_all(format!("{line}\n").as_bytes())
                .await
                .map_err(|e| format!("cannot append to `{path}`: {e}"))?;
            file.sync_data()
                .await
                .map_err(|e| format!("cannot sync `{path}`: {e}"))?;
            Ok(json!({"appended": path}))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_call_appends_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let tool = AppendFile::new(dir.path().to_path_buf());
        for line in ["one", "two"] {
            tool.call(json!({"path": "log.txt", "line": line}))
                .await
                .unwrap();
        }
        let text = std::fs::read_to_string(dir.path().join("log.txt")).unwrap();
        assert_eq!(text, "one\ntwo\n");
    }
}
