//! Figure 2, token latency: engine yield → client receive for 1, 100 and 1,000 live
//! sessions at 50 tokens/s with persistence on (SQLite), next to the same app and path
//! on a store that writes nothing, to show what persistence costs.

use serde_json::json;

use super::live::{self, Live, TOKEN_PERIOD};
use super::Ctx;
use crate::report::{Row, Verdict};
use crate::server::{InProcess, Pace};
use crate::stats::{ms, thousands};

/// The targets at 100 sessions, in nanoseconds.
const P99_TARGET: u64 = 500_000;
const P999_TARGET: u64 = 5_000_000;

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let pace = Pace {
        tokens: ctx.scale.latency_tokens,
        delay_ms: TOKEN_PERIOD.as_millis() as u64,
    };
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for &sessions in &ctx.scale.latency_sessions {
        let measure = |app: &InProcess| {
            let (tokens, warmup) = (ctx.scale.latency_tokens, ctx.scale.warmup_tokens);
            ctx.client
                .block_on(live::measure(&app.address, sessions, tokens, warmup))
        };
        let (app, _store) = InProcess::on_sqlite(pace)?;
        let tandem = measure(&app);
        app.stop();
        let app = InProcess::on_noop(pace)?;
        let baseline = measure(&app);
        app.stop();
        errors.extend(
            tandem
                .errors
                .iter()
                .map(|e| format!("{sessions} sessions: {e}")),
        );
        errors.extend(
            baseline
                .errors
                .iter()
                .map(|e| format!("{sessions} sessions, no-op store: {e}")),
        );
        rows.push(row(sessions, &tandem, &baseline));
    }
    if !errors.is_empty() {
        anyhow::bail!("token latency: {}", errors.join("; "));
    }
    Ok(rows)
}

fn row(sessions: usize, tandem: &Live, baseline: &Live) -> Row {
    let (t, b) = (&tandem.latency, &baseline.latency);
    let shown = |live: &Live| {
        let mut text = live.latency.display_ms();
        if !live.problems.is_empty() {
            text.push_str(&format!(" ({} sessions failed)", live.problems.len()));
        }
        text
    };
    let (target, verdict) = if sessions == 100 {
        let met = t.p99_ns <= P99_TARGET && t.p999_ns < P999_TARGET && tandem.problems.is_empty();
        ("p99 ≤ 0.5 ms, p99.9 < 5 ms".to_string(), Verdict::of(met))
    } else {
        ("-".to_string(), Verdict::Info)
    };
    let plural = if sessions == 1 { "" } else { "s" };
    Row::new(format!(
        "2. latency, {} live session{plural} (p50/p99/p99.9/max)",
        thousands(sessions as u64)
    ))
    .tandem(shown(tandem))
    .baseline(format!("{} no-op store", shown(baseline)))
    .ratio(t.p99_ns as f64 / b.p99_ns.max(1) as f64)
    .target(target, verdict)
    .data(json!({
        "sessions": sessions,
        "tandem": t, "noop_store": b,
        "tandem_problems": tandem.problems.iter().take(5).collect::<Vec<_>>(),
        "noop_problems": baseline.problems.iter().take(5).collect::<Vec<_>>(),
        "p99_ms": ms(t.p99_ns),
    }))
}
