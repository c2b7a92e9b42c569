//! The `write_file` tool: writes a text file inside the workspace folder.
//!
//! It changes things, so it needs a person's approval by default; writing the same file
//! twice gives the same result, so it is idempotent. Paths are relative to the workspace
//! and may not leave it (no absolute paths, no `..`).

use std::path::{Component, Path, PathBuf};

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{Tool, ToolSpec};

/// Largest file the tool writes, in bytes.
const MAX_CONTENT_BYTES: usize = 1024 * 1024;

/// Writes files under one folder.
pub struct WriteFile {
    workspace: PathBuf,
}

impl WriteFile {
    /// A tool that writes under `workspace` (created on first write).
    pub fn new(workspace: PathBuf) -> Self {
        Self { workspace }
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
                    "path": {"type": "string", "minLength": 1, "maxLength": 255},
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

    fn call(&self, arguments: Value) -> BoxFuture<'static, Result<Value, String>> {
        let path = arguments["path"].as_str().unwrap_or_default().to_string();
        let content = arguments["content"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let target = inside(&self.workspace, &path);
        Box::pin(async move {
            let target = with_folder(target?, &path).await?;
            tokio::fs::write(&target, content.as_bytes())
                .await
                .map_err(|e| format!("cannot write `{path}`: {e}"))?;
            Ok(json!({"written": path, "bytes": content.len()}))
        })
    }
}

/// Creates the folder `target` goes in; `path` names it in errors.
pub(super) async fn with_folder(target: PathBuf, path: &str) -> Result<PathBuf, String> {
    if let Some(folder) = target.parent() {
        tokio::fs::create_dir_all(folder)
            .await
            .map_err(|e| format!("cannot create the folder for `{path}`: {e}"))?;
    }
    Ok(target)
}

/// `relative` joined to `workspace`, refused if it would leave the workspace.
pub(super) fn inside(workspace: &Path, relative: &str) -> Result<PathBuf, String> {
    let path = Path::new(relative);
    let plain = path
        .components()
        .all(|part| matches!(part, Component::Normal(_)));
    if !plain {
        return Err(format!(
            "`{relative}` must be a relative path inside the workspace (no `/` at the start, no `..`)"
        ));
    }
    Ok(workspace.join(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_workspace() {
        let root = Path::new("/w");
        assert_eq!(inside(root, "a/b.txt").unwrap(), Path::new("/w/a/b.txt"));
        assert!(inside(root, "../x").is_err());
        assert!(inside(root, "/etc/passwd").is_err());
        assert!(inside(root, "a/../../x").is_err());
    }

    #[tokio::test]
    async fn writes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let tool = WriteFile::new(dir.path().to_path_buf());
        let result = tool
            .call(json!({"path": "n/note.txt", "content": "hi"}))
            .await
            .unwrap();
        assert_eq!(result["bytes"], 2);
        let text = std::fs::read_to_string(dir.path().join("n/note.txt")).unwrap();
        assert_eq!(text, "hi");
    }
}
