//! Figure 4, capacity: the most live sessions at 50 tokens/s each that keep p99
//! latency under 10 ms with no lost or duplicated frame. A bounded search over fixed
//! steps on a fresh app each, stopping at the first step that fails or when the time
//! budget is spent.

use std::time::Instant;

use serde_json::json;

use super::live::{self, TOKEN_PERIOD};
use super::Ctx;
use crate::report::{Row, Verdict};
use crate::server::{InProcess, Pace};
use crate::stats::{ms, thousands};

/// The latency bound of a passing step, in nanoseconds.
const P99_BOUND: u64 = 10_000_000;
/// The target.
const TARGET: usize = 1_000;

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let started = Instant::now();
    let pace = Pace {
        tokens: ctx.scale.capacity_tokens,
        delay_ms: TOKEN_PERIOD.as_millis() as u64,
    };
    let mut passed: Option<(usize, u64)> = None;
    let mut stopped = "every step passed".to_string();
    let mut steps = Vec::new();
    let mut errors = Vec::new();
    for &sessions in &ctx.scale.capacity_steps {
        if started.elapsed() > ctx.scale.capacity_budget {
            stopped = format!("time budget spent before {sessions}");
            break;
        }
        let (app, _store) = InProcess::on_sqlite(pace)?;
        let (tokens, warmup) = (ctx.scale.capacity_tokens, ctx.scale.warmup_tokens);
        let live = ctx
            .client
            .block_on(live::measure(&app.address, sessions, tokens, warmup));
        app.stop();
        let p99 = live.latency.p99_ns;
        steps.push(json!({"sessions": sessions, "latency": live.latency,
            "failed_sessions": live.problems.len(), "errors": live.errors.len()}));
        errors.extend(
            live.errors
                .iter()
                .map(|e| format!("{sessions} sessions: {e}")),
        );
        let ok = live.errors.is_empty() && live.problems.is_empty() && p99 < P99_BOUND;
        if !ok {
            let why = match live.problems.first().or(live.errors.first()) {
                Some(problem) => format!(
                    "{} sessions failed, e.g. {problem}",
                    live.problems.len() + live.errors.len()
                ),
                None => format!("p99 {} ms", ms(p99)),
            };
            stopped = format!("{sessions} failed: {why}");
            break;
        }
        passed = Some((sessions, p99));
    }
    if !errors.is_empty() {
        anyhow::bail!("capacity: {}", errors.join("; "));
    }
    let best = passed.map_or(0, |(n, _)| n);
    let shown = match passed {
        Some((n, p99)) => format!(
            "{} sessions (p99 {} ms); {stopped}",
            thousands(n as u64),
            ms(p99)
        ),
        None => format!("none; {stopped}"),
    };
    let row = Row::new("4. capacity: live sessions at 50 tokens/s, p99 < 10 ms")
        .tandem(shown)
        .target(
            format!("≥ {}", thousands(TARGET as u64)),
            Verdict::of(best >= TARGET),
        )
        .data(json!({"largest_passing": best, "steps": steps,
            "seconds": started.elapsed().as_secs_f64()}));
    Ok(vec![row])
}
