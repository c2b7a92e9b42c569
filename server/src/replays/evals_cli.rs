//! `tandem eval`: asks a running server for an eval (`POST /api/evals`), waits for it to
//! end, prints a table per variant (pass^k, pass@1, tokens, cost, latency) and per
//! conversation, writes the eval as JSON with `--out`, and says whether every variant
//! reached `--min-pass-hat-k`: the exit code a CI job gates a prompt or model change on.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use shared::evals::{Eval, EvalFilter, EvalInput};
use shared::replays::{Expect, ReplayStatus, Variant};

use crate::config::EvalCommand;

/// How often the eval is read while it runs.
const POLL: Duration = Duration::from_millis(500);

/// What an eval came to: its table and whether every variant reached the bar.
pub struct Outcome {
    pub table: String,
    pub passed: bool,
    pub eval: Eval,
}

/// Why `tandem eval` could not tell.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("--variant {0}: write label=model (label= for the model each run used)")]
    Variant(String),
    #[error("cannot read the token file: {0}")]
    Token(std::io::Error),
    #[error("the server at {0} could not be reached: {1}")]
    Unreachable(String, reqwest::Error),
    #[error("the server refused the eval ({0}): {1}")]
    Refused(u16, String),
    #[error("the eval did not end within {0} s")]
    Timeout(u64),
    #[error("cannot write {0}: {1}")]
    Write(String, std::io::Error),
}

/// The request `command` makes.
pub fn input_of(command: &EvalCommand) -> Result<EvalInput, EvalError> {
    let variants = command
        .variants
        .iter()
        .map(|given| {
            let (label, model) = given
                .split_once('=')
                .ok_or_else(|| EvalError::Variant(given.clone()))?;
            Ok(Variant {
                label: label.trim().to_string(),
                model: Some(model.trim().to_string()).filter(|m| !m.is_empty()),
                ..Variant::default()
            })
        })
        .collect::<Result<Vec<_>, EvalError>>()?;
    let filter = EvalFilter {
        feedback: command.feedback,
        since: command.since.clone(),
        title_contains: command.title_contains.clone(),
    };
    let (sessions, filter) = match command.sessions.is_empty() {
        false => (Some(command.sessions.clone()), None),
        true => (None, Some(filter)),
    };
    let expect = (!command.contains.is_empty()).then(|| Expect {
        contains: command.contains.clone(),
        ..Expect::default()
    });
    Ok(EvalInput {
        sessions,
        filter,
        variants,
        k: command.k,
        expect,
        ..EvalInput::default()
    })
}

/// Runs the eval `command` asks for against its server, to its end.
pub async fn run(command: &EvalCommand) -> Result<Outcome, EvalError> {
    let input = input_of(command)?;
    let token = match &command.token_file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(EvalError::Token)?
                .trim()
                .to_string(),
        ),
        None => None,
    };
    let server = command.server.trim_end_matches('/').to_string();
    let http = reqwest::Client::new();
    let request = |builder: reqwest::RequestBuilder| match &token {
        Some(token) => builder.bearer_auth(token),
        None => builder,
    };
    let unreachable = |error| EvalError::Unreachable(server.clone(), error);
    let body = serde_json::to_string(&input).expect("an eval request serialises");
    let post = http
        .post(format!("{server}/api/evals"))
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body);
    let created = request(post).send().await.map_err(unreachable)?;
    let mut eval = read(created).await?;
    let started = Instant::now();
    while eval.status == ReplayStatus::Running {
        if started.elapsed() > Duration::from_secs(command.timeout_seconds) {
            return Err(EvalError::Timeout(command.timeout_seconds));
        }
        tokio::time::sleep(POLL).await;
        let url = format!("{server}/api/evals/{}", eval.id);
        let response = request(http.get(url)).send().await.map_err(unreachable)?;
        eval = read(response).await?;
    }
    if let Some(path) = &command.out {
        let json = serde_json::to_string_pretty(&eval).expect("an eval serialises");
        std::fs::write(path, json).map_err(|e| EvalError::Write(path.display().to_string(), e))?;
    }
    let passed = eval
        .variants
        .iter()
        .all(|v| v.pass_hat_k.is_some_and(|p| p >= command.min_pass_hat_k));
    Ok(Outcome {
        table: table(&eval, command.min_pass_hat_k),
        passed,
        eval,
    })
}

/// The eval from a response, or the server's refusal.
async fn read(response: reqwest::Response) -> Result<Eval, EvalError> {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    if !(200..300).contains(&status) {
        return Err(EvalError::Refused(status, text));
    }
    serde_json::from_str(&text).map_err(|e| EvalError::Refused(status, e.to_string()))
}

/// The eval as a plain-text table: one line a variant, then one a conversation.
pub fn table(eval: &Eval, bar: f64) -> String {
    let score = |value: Option<f64>| value.map_or("-".to_string(), |v| format!("{v:.2}"));
    let mut out = String::new();
    let count = match eval.conversations.len() {
        1 => "1 conversation".to_string(),
        n => format!("{n} conversations"),
    };
    let _ = writeln!(
        out,
        "eval {} · k = {} · {count} · bar pass^k >= {bar:.2}",
        eval.id, eval.k
    );
    let _ = writeln!(
        out,
        "{:<16} {:<24} {:>7} {:>7} {:>10} {:>10} {:>9} {:>8}  verdict",
        "variant", "model", "pass^k", "pass@1", "tokens in", "tokens out", "cost $", "p50 ms"
    );
    for variant in &eval.variants {
        let verdict = match variant.pass_hat_k {
            Some(p) if p >= bar => "pass",
            Some(_) => "FAIL",
            None => "unknown",
        };
        let _ = writeln!(
            out,
            "{:<16} {:<24} {:>7} {:>7} {:>10} {:>10} {:>9} {:>8}  {verdict}",
            variant.label,
            variant.model,
            score(variant.pass_hat_k),
            score(variant.pass_at1),
            variant.input_tokens,
            variant.output_tokens,
            variant.cost_usd.map_or("-".into(), |c| format!("{c:.4}")),
            variant
                .latency_ms_p50
                .map_or("-".into(), |ms| ms.to_string()),
        );
    }
    for conversation in &eval.conversations {
        let cells: Vec<String> = conversation
            .variants
            .iter()
            .map(|cell| format!("{} {}", cell.label, score(cell.pass_hat_k)))
            .collect();
        let shown = match &conversation.skipped {
            Some(why) => format!("skipped: {why}"),
            None => cells.join(" · "),
        };
        let _ = writeln!(
            out,
            "  {} {:<40} {shown}",
            conversation.session_id,
            conversation.title.chars().take(40).collect::<String>()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Args {
        #[command(flatten)]
        eval: EvalCommand,
    }

    #[test]
    fn variants_are_label_equals_model_and_sessions_or_a_filter_choose_the_conversations() {
        let args = Args::parse_from([
            "eval",
            "--sessions",
            "a,b",
            "--variant",
            "now=",
            "--variant",
            "mini=gpt-mini",
            "--k",
            "2",
        ]);
        let input = input_of(&args.eval).unwrap();
        assert_eq!(input.sessions, Some(vec!["a".into(), "b".into()]));
        assert_eq!(input.filter, None);
        assert_eq!(input.variants[0].model, None);
        assert_eq!(input.variants[1].model.as_deref(), Some("gpt-mini"));
        let args = Args::parse_from(["eval", "--feedback", "down", "--variant", "x"]);
        assert!(matches!(input_of(&args.eval), Err(EvalError::Variant(_))));
    }
}
