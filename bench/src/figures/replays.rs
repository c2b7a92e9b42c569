//! Figure 20, replays: 100 trials of a run whose conversation already holds 1,000 events
//! (each trial a branch sharing them), from the request to the last trial scored, next to
//! the same 100 trials of a run with nothing before it: a trial's branch shares the prefix,
//! so the two should take about as long. Then the run's tool calls served from the record
//! (`tools: recorded`) next to the same calls run again (`tools: live`: the calculator
//! changes nothing, so it runs): a trial's latency p50 either way.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem::domain::SessionId;

use super::Ctx;
use crate::client::Rest;
use crate::report::Row;
use crate::seed;
use crate::server::{InProcess, Pace};
use crate::stats::{ms, Summary};

/// Events already in the conversation before the replayed run.
const PREFIX_EVENTS: usize = 1_000;
/// Trials per replay (5 variants × 10); two replays make the 100.
const VARIANTS: usize = 5;
const K: usize = 10;
/// Calculator calls in the run whose tools are served or run again.
const CALLS: usize = 20;
/// How long a replay may take before the figure fails.
const LIMIT: Duration = Duration::from_secs(300);

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let mut rows = vec![trials_row(ctx)?];
    rows.push(tools_row(ctx)?);
    Ok(rows)
}

/// 100 trials after a 1,000-event prefix and after none.
fn trials_row(ctx: &Ctx) -> anyhow::Result<Row> {
    let (prefix, replays) = match ctx.smoke {
        true => (100, 1),
        false => (PREFIX_EVENTS, 2),
    };
    let flags = ["--replay-concurrency", "16"];
    let pace = Pace {
        tokens: 1,
        delay_ms: 0,
    };
    let (app, store) = InProcess::on_sqlite_with(pace, &flags)?;
    let long = app.block_on(seed::backlog(&*store, prefix))?;
    let address = app.address.clone();
    let measured = ctx.client.block_on(async {
        let rest = Rest::new(&address);
        let short = rest.create_session().await?;
        let bare = all_trials(&rest, &short, replays).await?;
        let shared = all_trials(&rest, &long.to_string(), replays).await?;
        anyhow::Ok((bare, shared))
    });
    app.stop();
    let (bare, shared) = measured?;
    let trials = replays * VARIANTS * K;
    Ok(Row::new(format!(
        "20a. {trials} replay trials of a run after {prefix} events (each a branch sharing them): \
         request to the last trial scored"
    ))
    .tandem(format!(
        "{} ms ({} ms a trial)",
        ms(shared),
        ms(shared / trials as u64)
    ))
    .baseline(format!(
        "{} ms: the same {trials} trials of a run with nothing before it",
        ms(bare)
    ))
    .ratio(shared as f64 / bare.max(1) as f64)
    .data(json!({"trials": trials, "prefixEvents": prefix, "sharedNs": shared, "bareNs": bare})))
}

/// Sends a message in `session`, waits for its run, then replays it `replays` times at
/// once (5 variants × 10 trials each) and waits for all of them; the ns from the first
/// request to the last replay done.
async fn all_trials(rest: &Rest, session: &str, replays: usize) -> anyhow::Result<u64> {
    say_and_wait(rest, session).await?;
    let variants: Vec<Value> = (0..VARIANTS)
        .map(|n| json!({"label": format!("v{n}")}))
        .collect();
    let body = json!({"variants": variants, "k": K});
    let started = Instant::now();
    let mut ids = Vec::new();
    for _ in 0..replays {
        let replay = rest
            .post(&format!("/api/sessions/{session}/replays"), body.clone())
            .await?;
        ids.push(replay["id"].as_str().unwrap_or_default().to_string());
    }
    for id in &ids {
        let done = until_done(rest, id).await?;
        let passed = done["variants"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| v["passes"].as_u64().unwrap_or(0))
            .sum::<u64>();
        anyhow::ensure!(
            passed == (VARIANTS * K) as u64,
            "{passed} of {} trials passed: {done}",
            VARIANTS * K
        );
    }
    Ok(started.elapsed().as_nanos() as u64)
}

/// A run of `CALLS` calculator calls, replayed 10 times with its tools served from the
/// record and 10 times with them run again.
fn tools_row(ctx: &Ctx) -> anyhow::Result<Row> {
    let dir = tempfile::tempdir()?;
    let script = dir.path().join("script.json");
    let calls: Vec<Value> = (0..CALLS)
        .map(|n| json!({"name": "calculator", "arguments": {"expression": format!("{n}*7")}}))
        .collect();
    let turns = json!({"turns": [{"toolCalls": calls}, {"text": "Done."}]});
    std::fs::write(&script, turns.to_string())?;
    let script = script.to_string_lossy().to_string();
    let flags = ["--engine", "script", "--script", &script];
    let pace = Pace {
        tokens: 1,
        delay_ms: 0,
    };
    let (app, _) = InProcess::on_sqlite_with(pace, &flags)?;
    let address = app.address.clone();
    let k = if ctx.smoke { 3 } else { K };
    let measured = ctx.client.block_on(async {
        let rest = Rest::new(&address);
        let session = rest.create_session().await?;
        say_and_wait(&rest, &session).await?;
        let mut served = trial_latencies(&rest, &session, "recorded", k).await?;
        let mut live = trial_latencies(&rest, &session, "live", k).await?;
        anyhow::Ok((Summary::of(&mut served), Summary::of(&mut live)))
    });
    app.stop();
    let (served, live) = measured?;
    Ok(Row::new(format!(
        "20b. a replay trial of a run of {CALLS} tool calls: its calls served from the record \
         (latency p50 / p99)"
    ))
    .tandem(format!("{} / {} ms", ms(served.p50_ns), ms(served.p99_ns)))
    .baseline(format!(
        "{} / {} ms: the same calls run again (`tools: live`)",
        ms(live.p50_ns),
        ms(live.p99_ns)
    ))
    .ratio(served.p50_ns as f64 / live.p50_ns.max(1) as f64)
    .data(json!({"calls": CALLS, "k": k, "served": served, "live": live})))
}

/// Replays the session's run `k` times with `tools`; each trial's latency (ns).
async fn trial_latencies(
    rest: &Rest,
    session: &str,
    tools: &str,
    k: usize,
) -> anyhow::Result<Vec<u64>> {
    let body = json!({"variants": [{"label": tools}], "k": k, "tools": tools});
    let replay = rest
        .post(&format!("/api/sessions/{session}/replays"), body)
        .await?;
    let done = until_done(rest, replay["id"].as_str().unwrap_or_default()).await?;
    let trials = done["variants"][0]["trials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    trials
        .iter()
        .map(|trial| {
            anyhow::ensure!(trial["passed"] == true, "a trial failed: {trial}");
            let latency = trial["latencyMs"].as_u64().unwrap_or_default();
            Ok(latency * 1_000_000)
        })
        .collect()
}

/// Posts a message to `session` and waits until its run ended.
async fn say_and_wait(rest: &Rest, session: &str) -> anyhow::Result<()> {
    SessionId::parse(session).map_err(anyhow::Error::msg)?;
    rest.post(
        &format!("/api/sessions/{session}/messages"),
        json!({"text": "replay me"}),
    )
    .await?;
    let started = Instant::now();
    loop {
        let detail = rest.get(&format!("/api/sessions/{session}")).await?;
        if detail["status"] == "idle" {
            return Ok(());
        }
        anyhow::ensure!(started.elapsed() < LIMIT, "the run did not end: {detail}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Reads replay `id` until it is done.
async fn until_done(rest: &Rest, id: &str) -> anyhow::Result<Value> {
    let started = Instant::now();
    loop {
        let replay = rest.get(&format!("/api/replays/{id}")).await?;
        if replay["status"] == "done" {
            return Ok(replay);
        }
        anyhow::ensure!(
            started.elapsed() < LIMIT,
            "the replay did not end: {replay}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
