//! Figure 14, latency under disturbance: 100 live sessions at 50 tokens/s on SQLite,
//! measured calm, then with a slow viewer on every session, then through a storm of 500
//! sockets reconnecting with `after=0` at once, all on one app in one run. The issue's
//! target: the measured viewers' p99 moves by no more than 2× the calm run's.

use serde_json::json;

use super::disturb::Disturbance;
use super::live::{self, Live, TOKEN_PERIOD};
use super::Ctx;
use crate::report::{Row, Verdict};
use crate::server::{InProcess, Pace};
use crate::stats::{ms, thousands};

/// How far a disturbed p99 may move from the calm one.
const MAX_RATIO: f64 = 2.0;

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let (sessions, tokens) = (ctx.scale.disturbed_sessions, ctx.scale.latency_tokens);
    let pace = Pace {
        tokens,
        delay_ms: TOKEN_PERIOD.as_millis() as u64,
    };
    // The storm comes a quarter into the runs: every session has a backlog to replay.
    let storm = Disturbance::ReconnectStorm {
        sockets: ctx.scale.storm_sockets,
        at: TOKEN_PERIOD * (tokens / 4) as u32,
    };
    let (app, _store) = InProcess::on_sqlite(pace)?;
    let measure = |disturbance| {
        ctx.client.block_on(live::measure_disturbed(
            &app.address,
            sessions,
            tokens,
            ctx.scale.warmup_tokens,
            disturbance,
        ))
    };
    let calm = measure(Disturbance::None);
    let slow = measure(Disturbance::SlowViewers);
    let stormy = measure(storm);
    app.stop();
    let mut errors = Vec::new();
    for (name, live) in [("calm", &calm), ("slow viewers", &slow), ("storm", &stormy)] {
        errors.extend(live.errors.iter().map(|e| format!("{name}: {e}")));
    }
    if !errors.is_empty() {
        anyhow::bail!("latency under disturbance: {}", errors.join("; "));
    }
    let who = format!("{} sessions", thousands(sessions as u64));
    let storm_sockets = thousands(ctx.scale.storm_sockets as u64);
    Ok(vec![
        row(
            format!("14. latency, {who}, a slow viewer on each (p50/p99/p99.9/max)"),
            &slow,
            &calm,
        ),
        row(
            format!("14. latency, {who}, {storm_sockets} sockets reconnecting at once"),
            &stormy,
            &calm,
        ),
    ])
}

fn row(title: String, disturbed: &Live, calm: &Live) -> Row {
    let (d, c) = (&disturbed.latency, &calm.latency);
    let ratio = d.p99_ns as f64 / c.p99_ns.max(1) as f64;
    let met = ratio <= MAX_RATIO && disturbed.problems.is_empty() && calm.problems.is_empty();
    let mut shown = d.display_ms();
    if let Some(storm) = disturbed.disturbed.as_ref().filter(|s| s.storm_ms > 0.0) {
        shown.push_str(&format!(
            "; {} frames replayed in {:.0} ms",
            thousands(storm.frames),
            storm.storm_ms
        ));
    }
    if !disturbed.problems.is_empty() {
        shown.push_str(&format!(" ({} sessions failed)", disturbed.problems.len()));
    }
    Row::new(title)
        .tandem(shown)
        .baseline(format!("{} calm", c.display_ms()))
        .ratio(ratio)
        .target("p99 ≤ 2× calm", Verdict::of(met))
        .data(json!({
            "disturbed": d, "calm": c,
            "disturbance": disturbed.disturbed,
            "problems": disturbed.problems.iter().chain(&calm.problems).take(5).collect::<Vec<_>>(),
            "p99_ms": ms(d.p99_ns),
        }))
}
