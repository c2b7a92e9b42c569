//! What a `run_python` call card shows in place of raw JSON: the program, highlighted as
//! Python (with a copy button, as an answer's code blocks), and under it what the program
//! printed, its errors, and how it ended (its exit code, or the sandbox limit that stopped
//! it). Arguments still streaming, or a result of another shape, show as any tool's do.

use leptos::prelude::*;
use serde_json::Value;

use crate::markdown;

/// The tool whose calls this card shows.
pub const PYTHON_TOOL: &str = "run_python";

/// The program in a call's arguments, once they parse.
pub fn program_of(args: &str) -> Option<String> {
    let args: Value = serde_json::from_str(args).ok()?;
    args["code"].as_str().map(str::to_string)
}

/// What the program printed and how it ended, when the result has that shape.
#[derive(Debug, Clone, PartialEq)]
pub struct PythonOutput {
    stdout: String,
    stderr: String,
    /// "Exited with 0", or the error that stopped it.
    ending: String,
    failed: bool,
}

impl PythonOutput {
    /// The output in a call's result (`{stdout, stderr, exitCode?, error?, limit?}`).
    pub fn of(result: &str) -> Option<PythonOutput> {
        let result: Value = serde_json::from_str(result).ok()?;
        let stdout = result["stdout"].as_str()?.to_string();
        let stderr = result["stderr"].as_str().unwrap_or_default().to_string();
        let code = result["exitCode"].as_i64();
        let ending = match (code, result["error"].as_str(), result["limit"].as_str()) {
            (_, Some(error), Some(limit)) => format!("Stopped by the {limit} limit: {error}"),
            (Some(code), _, _) => format!("Exited with {code}"),
            (None, Some(error), None) => format!("Stopped: {error}"),
            (None, None, _) => "Ended".to_string(),
        };
        Some(PythonOutput {
            stdout,
            stderr,
            failed: code != Some(0),
            ending,
        })
    }
}

/// The program, highlighted.
#[component]
pub fn PythonCode(code: String) -> impl IntoView {
    view! {
        <div class="tool-label">"Code"</div>
        <div class="tool-code" data-testid="python-code" inner_html=markdown::code_block("python", &code)></div>
    }
}

/// What the program printed, its errors, and how it ended.
#[component]
pub fn PythonResult(output: PythonOutput) -> impl IntoView {
    let PythonOutput {
        stdout,
        stderr,
        ending,
        failed,
    } = output;
    let printed = (!stdout.is_empty()).then(|| view! {
        <pre class="tool-pre" data-testid="python-stdout" tabindex="0" aria-label="What the program printed">{stdout}</pre>
    });
    let errors = (!stderr.is_empty()).then(|| view! {
        <div class="tool-label">"Errors"</div>
        <pre class="tool-pre python-stderr" data-testid="python-stderr" tabindex="0" aria-label="What the program wrote to stderr">{stderr}</pre>
    });
    view! {
        <div class="tool-label">"Output"</div>
        {printed}
        {errors}
        <p class="python-ending" class:failed=failed data-testid="python-ending">{ending}</p>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_reads_as_output_and_an_ending() {
        let done = PythonOutput::of(r#"{"stdout":"4\n","stderr":"","exitCode":0}"#).unwrap();
        assert_eq!(
            (done.ending.as_str(), done.failed),
            ("Exited with 0", false)
        );
        let stopped = PythonOutput::of(
            r#"{"stdout":"","stderr":"","error":"the tool ran out of time (1 s)","limit":"time"}"#,
        )
        .unwrap();
        assert_eq!(
            stopped.ending,
            "Stopped by the time limit: the tool ran out of time (1 s)"
        );
        assert!(stopped.failed);
        assert_eq!(PythonOutput::of(r#"{"error":"unknown tool"}"#), None);
        assert_eq!(
            program_of(r#"{"code":"print(1)"}"#).as_deref(),
            Some("print(1)")
        );
        assert_eq!(program_of(r#"{"code":"pri"#), None);
    }
}
