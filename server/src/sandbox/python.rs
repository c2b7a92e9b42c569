//! `run_python`: Python the model writes, run by an interpreter compiled to WebAssembly
//! (RustPython, built for `wasm32-wasip1` with its standard library frozen in) in the
//! sandbox, under the same limits as any sandboxed tool: no network, no environment, and
//! the user's workspace at `/workspace` only if the operator says so (`--python-files`).
//!
//! The program is `python -c CODE`: what it prints is the result, an uncaught exception
//! is an exit code of 1 with its traceback on stderr, and a limit reached is an error that
//! names it.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use super::call::{Call, Outcome};
use super::engine::Sandbox;
use super::manifest::FileAccess;
use super::program::Program;
use super::tool::{run_seeing, start_of};
use crate::agent::tools::{Tool, ToolCall, ToolContext, ToolSpec, Workspaces};

/// The tool's name.
pub const NAME: &str = "run_python";
/// The longest program accepted, in bytes.
pub const MAX_CODE_BYTES: usize = 64 * 1024;
/// The most of stdin a call may be given, in bytes.
pub const MAX_STDIN_BYTES: usize = 256 * 1024;
/// The most of stdout a result carries (the start of it).
pub const MAX_RESULT_STDOUT_BYTES: usize = 32 * 1024;
/// The most of stderr a result carries: the end of it, where a traceback says what failed.
pub const MAX_RESULT_STDERR_BYTES: usize = 4 * 1024;

/// The `run_python` tool.
pub struct RunPython {
    program: Program,
    sandbox: Arc<Sandbox>,
    workspaces: Arc<Workspaces>,
    files: FileAccess,
}

impl RunPython {
    /// The tool running the interpreter at `interpreter` (checked and compiled now, or
    /// read back from the sandbox's cache), seeing the workspace as `files` says.
    pub fn load(
        interpreter: &Path,
        files: FileAccess,
        sandbox: Arc<Sandbox>,
        workspaces: Arc<Workspaces>,
    ) -> anyhow::Result<Self> {
        let bytes = std::fs::read(interpreter).map_err(|e| {
            anyhow::anyhow!(
                "cannot read the Python interpreter {}: {e}",
                interpreter.display()
            )
        })?;
        let program = sandbox
            .prepare(&bytes)
            .map_err(|e| anyhow::anyhow!("{}: it cannot run Python: {e}", interpreter.display()))?;
        Ok(Self {
            program,
            sandbox,
            workspaces,
            files,
        })
    }
}

impl Tool for RunPython {
    fn spec(&self) -> ToolSpec {
        let files = match self.files {
            FileAccess::None => "It sees no files.",
            FileAccess::Read => "The user's files are at /workspace, read-only.",
            FileAccess::Write => "The user's files are at /workspace, to read and write.",
        };
        let limits = self.sandbox.limits();
        ToolSpec {
            name: NAME.into(),
            description: format!(
                "Runs a Python 3 program (RustPython 0.5: the standard library, no network, \
                 no threads, no subprocesses) and returns what it printed: {{stdout, stderr, \
                 exitCode}}. Print what you want to see. {files} It may run {} s at most and \
                 hold {} MiB.",
                limits.timeout.as_secs_f64(),
                limits.memory_bytes >> 20
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "code": {"type": "string", "minLength": 1, "maxLength": MAX_CODE_BYTES,
                             "description": "The program, run as `python -c code`."},
                    "stdin": {"type": "string", "maxLength": MAX_STDIN_BYTES,
                              "description": "What the program reads on stdin."}
                },
                "required": ["code"],
                "additionalProperties": false
            }),
        }
    }

    fn check(&self, arguments: &Value) -> Result<(), String> {
        let code = arguments["code"].as_str().unwrap_or_default();
        if code.len() > MAX_CODE_BYTES {
            return Err(format!("the code is longer than {MAX_CODE_BYTES} bytes"));
        }
        let stdin = arguments["stdin"].as_str().unwrap_or_default();
        if stdin.len() > MAX_STDIN_BYTES {
            return Err(format!("stdin is longer than {MAX_STDIN_BYTES} bytes"));
        }
        Ok(())
    }

    /// A program that writes files changes things: a person approves it, as `write_file`.
    fn changes_things(&self) -> bool {
        self.files == FileAccess::Write
    }

    /// A program that cannot write has nothing to repeat: a crash's cut call runs again.
    fn idempotent(&self) -> bool {
        self.files != FileAccess::Write
    }

    fn call(&self, arguments: Value, context: &ToolContext) -> ToolCall {
        let (sandbox, program) = (self.sandbox.clone(), self.program.clone());
        let (workspaces, user, files) = (self.workspaces.clone(), context.user.clone(), self.files);
        Box::pin(async move {
            let code = arguments["code"]
                .as_str()
                .ok_or("`code` must be a string")?;
            let stdin = arguments["stdin"].as_str().unwrap_or_default();
            let call = Call {
                name: "python".into(),
                args: vec!["-c".into(), code.into()],
                stdin: stdin.as_bytes().to_vec(),
                limits: sandbox.limits(),
                files: None,
            };
            let outcome = run_seeing(&sandbox, &program, call, files, &workspaces, &user).await?;
            Ok(python_result(outcome))
        })
    }
}

/// A program's outcome as the model reads it: `{stdout, stderr, exitCode}`, with an
/// `error` too when it did not exit with 0, and the `limit` that stopped it, if one did.
pub fn python_result(outcome: Outcome) -> Value {
    let (code, why, limit, stdout, stderr) = match outcome {
        Outcome::Exited {
            code,
            stdout,
            stderr,
        } => {
            let why = (code != 0).then(|| format!("the program exited with {code}"));
            (Some(code), why, None, stdout, stderr)
        }
        Outcome::Stopped {
            why,
            limit,
            stdout,
            stderr,
        } => (None, Some(why), limit, stdout, stderr),
    };
    let mut result = json!({
        "stdout": start_of(&stdout, MAX_RESULT_STDOUT_BYTES),
        "stderr": end_of(&stderr, MAX_RESULT_STDERR_BYTES),
    });
    if let Some(code) = code {
        result["exitCode"] = json!(code);
    }
    if stdout.len() > MAX_RESULT_STDOUT_BYTES {
        result["stdoutBytes"] = json!(stdout.len());
    }
    if let Some(why) = why {
        result["error"] = json!(why);
    }
    if let Some(limit) = limit {
        result["limit"] = json!(limit.name());
    }
    result
}

/// The last `max` bytes of `bytes` as text, not splitting a character.
fn end_of(bytes: &[u8], max: usize) -> String {
    let mut start = bytes.len().saturating_sub(max);
    while start < bytes.len() && bytes[start] & 0b1100_0000 == 0b1000_0000 {
        start += 1;
    }
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Limit;

    fn exited(code: i32, stdout: &str, stderr: &str) -> Outcome {
        Outcome::Exited {
            code,
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn a_program_that_printed_is_its_output_and_exit_code() {
        let result = python_result(exited(0, "42\n", ""));
        assert_eq!(
            result,
            json!({"stdout": "42\n", "stderr": "", "exitCode": 0})
        );
    }

    #[test]
    fn a_failure_keeps_the_end_of_its_traceback() {
        let traceback = format!("{}ZeroDivisionError: division by zero\n", "é".repeat(4000));
        let result = python_result(exited(1, "", &traceback));
        assert_eq!(result["exitCode"], 1);
        assert_eq!(result["error"], "the program exited with 1");
        let kept = result["stderr"].as_str().unwrap();
        assert!(kept.len() <= MAX_RESULT_STDERR_BYTES);
        assert!(kept.ends_with("ZeroDivisionError: division by zero\n"));
        assert!(kept.trim_start_matches('é').starts_with("ZeroDivision"));
    }

    #[test]
    fn a_limit_is_named_and_long_output_is_cut_and_measured() {
        let result = python_result(Outcome::Stopped {
            why: "the tool ran out of time (1 s)".into(),
            limit: Some(Limit::Time),
            stdout: vec![b'x'; MAX_RESULT_STDOUT_BYTES + 5],
            stderr: Vec::new(),
        });
        assert_eq!(result["limit"], "time");
        assert!(result.get("exitCode").is_none());
        assert_eq!(result["stdoutBytes"], MAX_RESULT_STDOUT_BYTES + 5);
        assert_eq!(
            result["stdout"].as_str().unwrap().len(),
            MAX_RESULT_STDOUT_BYTES
        );
    }
}
