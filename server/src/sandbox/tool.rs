//! A WebAssembly module as a tool the model may call, like any built-in one: its
//! manifest says its schema, whether a person approves its calls, whether a call may run
//! twice and what it sees of the workspace.

use std::sync::Arc;

use serde_json::{json, Value};

use super::call::{Call, Outcome};
use super::engine::Sandbox;
use super::files::WorkspaceAccess;
use super::manifest::{Approval, FileAccess, Manifest};
use super::program::Program;
use crate::agent::tools::{Tool, ToolCall, ToolContext, ToolSpec, Workspaces};
use crate::domain::UserName;

/// The most of a failed call's stderr its error result carries.
pub const MAX_STDERR_BYTES: usize = 4096;

/// A sandboxed module as a tool.
pub struct WasmTool {
    name: String,
    manifest: Manifest,
    program: Program,
    sandbox: Arc<Sandbox>,
    workspaces: Arc<Workspaces>,
}

impl WasmTool {
    /// The tool `name`, running `program` as `manifest` says.
    pub fn new(
        name: String,
        manifest: Manifest,
        program: Program,
        sandbox: Arc<Sandbox>,
        workspaces: Arc<Workspaces>,
    ) -> Self {
        Self {
            name,
            manifest,
            program,
            sandbox,
            workspaces,
        }
    }
}

impl Tool for WasmTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: self.manifest.description.clone(),
            parameters: self.manifest.parameters.clone(),
        }
    }

    fn changes_things(&self) -> bool {
        self.manifest.approval == Approval::Always
    }

    fn idempotent(&self) -> bool {
        self.manifest.idempotent
    }

    fn call(&self, arguments: Value, context: &ToolContext) -> ToolCall {
        let (sandbox, program) = (self.sandbox.clone(), self.program.clone());
        let (workspaces, user) = (self.workspaces.clone(), context.user.clone());
        let name = self.name.clone();
        let files = self.manifest.files;
        let limits = sandbox.limits().within(self.manifest.limits);
        Box::pin(async move {
            let call = Call {
                name,
                args: Vec::new(),
                stdin: arguments.to_string().into_bytes(),
                limits,
                files: None,
            };
            let outcome = run_seeing(&sandbox, &program, call, files, &workspaces, &user).await?;
            Ok(result_of(outcome))
        })
    }
}

/// Runs `call` of `program`, seeing `user`'s workspace as `files` says. The turn comes
/// first: a call that may write holds the workspace's lock only while it runs, never while
/// it waits for its turn.
pub(super) async fn run_seeing(
    sandbox: &Sandbox,
    program: &Program,
    mut call: Call,
    files: FileAccess,
    workspaces: &Arc<Workspaces>,
    user: &UserName,
) -> Result<Outcome, String> {
    let turn = sandbox.turn().await;
    if files != FileAccess::None {
        let writes = files == FileAccess::Write;
        let (workspaces, user) = (workspaces.clone(), user.clone());
        let opened =
            tokio::task::spawn_blocking(move || WorkspaceAccess::open(&workspaces, &user, writes));
        let opened = opened.await.map_err(|_| "cannot open the workspace")?;
        call.files = Some(opened?);
    }
    Ok(sandbox.run(turn, program, call).await)
}

/// A call's outcome as the model reads it: stdout as JSON when it parses, else as text;
/// a failure as an error with the limit it reached and the start of its stderr.
pub fn result_of(outcome: Outcome) -> Value {
    let (why, limit, stderr) = match outcome {
        Outcome::Exited {
            code: 0, stdout, ..
        } => {
            return serde_json::from_slice(&stdout)
                .unwrap_or_else(|_| json!({"output": String::from_utf8_lossy(&stdout)}));
        }
        Outcome::Exited { code, stderr, .. } => {
            (format!("the tool exited with {code}"), None, stderr)
        }
        Outcome::Stopped {
            why, limit, stderr, ..
        } => (why, limit, stderr),
    };
    let mut result = json!({"error": why, "stderr": start_of(&stderr, MAX_STDERR_BYTES)});
    if let Some(limit) = limit {
        result["limit"] = json!(limit.name());
    }
    result
}

/// The first `max` bytes of `bytes` as text, not splitting a character.
pub(super) fn start_of(bytes: &[u8], max: usize) -> String {
    let mut end = bytes.len().min(max);
    while end > 0 && end < bytes.len() && bytes[end] & 0b1100_0000 == 0b1000_0000 {
        end -= 1;
    }
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::limits::Limit;

    #[test]
    fn stdout_is_the_result_as_json_or_as_text() {
        let exited = |stdout: &[u8]| Outcome::Exited {
            code: 0,
            stdout: stdout.to_vec(),
            stderr: Vec::new(),
        };
        let json = exited(br#"{"sum": 3}"#);
        assert_eq!(result_of(json), json!({"sum": 3}));
        let text = exited(b"three\n");
        assert_eq!(result_of(text), json!({"output": "three\n"}));
    }

    #[test]
    fn a_failure_names_its_limit_and_keeps_the_start_of_stderr() {
        let mut stderr = "é".repeat(MAX_STDERR_BYTES).into_bytes();
        stderr.push(b'!');
        let failed = Outcome::Stopped {
            why: "the tool ran out of fuel (5 units)".into(),
            limit: Some(Limit::Fuel),
            stdout: Vec::new(),
            stderr,
        };
        let result = result_of(failed);
        assert_eq!(result["limit"], "fuel");
        let kept = result["stderr"].as_str().unwrap();
        assert_eq!(kept.len(), MAX_STDERR_BYTES);
        assert!(kept.chars().all(|c| c == 'é'));
        let plain = result_of(Outcome::Exited {
            code: 3,
            stdout: b"partial".to_vec(),
            stderr: b"bad".to_vec(),
        });
        assert_eq!(
            plain,
            json!({"error": "the tool exited with 3", "stderr": "bad"})
        );
    }
}
