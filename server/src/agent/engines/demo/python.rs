//! The demo's Python scenario: it writes a short program and runs it with `run_python`
//! (the sandboxed interpreter, when the server has one), then reports what it printed.

use serde_json::json;

use super::{turn, Situation};
use crate::agent::engines::Turn;

/// What the demo runs when the message names no code and no arithmetic.
const PRIMES: &str = "\
# The first ten prime numbers, by trial division.
primes = []
n = 2
while len(primes) < 10:
    if all(n % p for p in primes):
        primes.append(n)
    n += 1
print(primes)
";

/// Runs a program (printing `arithmetic`, the message's arithmetic, when it names no code),
/// then reports what it printed or why it failed.
pub(super) fn run_python(s: &Situation<'_>, arithmetic: Option<String>) -> Turn {
    if s.results.is_empty() {
        return turn(
            "The person wants this computed with Python. I'll write a short program and run \
             it in the sandbox, then read what it printed.",
            "",
            Some((
                "run_python",
                json!({"code": program_for(s.ask, arithmetic)}),
            )),
        );
    }
    let result = s.result(0);
    let stdout = result["stdout"].as_str().unwrap_or_default().trim_end();
    let text = if let Some(limit) = result["limit"].as_str() {
        format!(
            "The program was stopped by the sandbox's {limit} limit: {}.",
            result["error"].as_str().unwrap_or("no reason given")
        )
    } else if result["exitCode"] == 0 {
        if stdout.is_empty() {
            "The program ran and printed nothing.".to_string()
        } else {
            format!("Python printed:\n\n```\n{stdout}\n```")
        }
    } else if let Some(stderr) = result["stderr"].as_str().filter(|e| !e.is_empty()) {
        let last = stderr.trim_end().lines().last().unwrap_or_default();
        format!("The program failed: `{last}`.")
    } else {
        let error = result["error"].as_str().unwrap_or("no reason given");
        format!("I couldn't run Python: {error}.")
    };
    turn("The program has run; I'll report its output.", &text, None)
}

/// The program a message asks for: the code after `python:` or in a fenced block, else
/// its `arithmetic` printed, else [`PRIMES`].
fn program_for(ask: &str, arithmetic: Option<String>) -> String {
    if let Some(fenced) = ask.split("```").nth(1) {
        let code = fenced.strip_prefix("python").unwrap_or(fenced);
        return code.trim_start_matches('\n').to_string();
    }
    let lower = ask.to_ascii_lowercase();
    if let Some(at) = lower.find("python:") {
        return format!("{}\n", ask[at + "python:".len()..].trim());
    }
    if let Some(expression) = arithmetic {
        let python = expression
            .replace('^', "**")
            .replace('×', "*")
            .replace('÷', "/");
        return format!("print({})\n", python.trim());
    }
    PRIMES.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_is_the_code_given_or_the_arithmetic_or_primes() {
        let power = Some("2^100".to_string());
        assert_eq!(
            program_for("compute with python 2^100", power),
            "print(2**100)\n"
        );
        assert_eq!(
            program_for("run this in python: print(sum(range(10)))", None),
            "print(sum(range(10)))\n"
        );
        assert_eq!(
            program_for("python please\n```python\nprint(1)\n```", None),
            "print(1)\n"
        );
        assert_eq!(program_for("use python for something", None), PRIMES);
    }
}
