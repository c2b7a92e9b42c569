//! Figure 10, several instances on one PostgreSQL database:
//! - cross-instance latency: sessions whose runs execute on instance B, each watched by
//!   one socket on B and one on A; every token's latency (engine yield → receive) on A
//!   next to the same token's on B, where it was committed, and the difference (what
//!   reaching another instance adds: `NOTIFY`, the relay's read, A's hub);
//! - takeover: the real binary twice, a run streaming on A, A SIGKILLed; the time until
//!   B's socket shows the run continued (`tandem.run_recovered`), next to the lease.

use std::time::{Duration, Instant};

use futures_util::future::try_join_all;
use serde_json::json;
use tandem::store::ScratchDatabase;

use super::live::TOKEN_PERIOD;
use super::Ctx;
use crate::child::{tandem_binary, Tandem};
use crate::client::{self, now_ns, Frame, Rest, SeqCheck, Socket};
use crate::report::{Row, Verdict};
use crate::server::{InProcess, Pace};
use crate::stats::{ms, Summary};

/// The aims: cross-instance p99 under 10 ms, takeover under twice the lease.
const CROSS_P99_TARGET: u64 = 10_000_000;
/// Sessions streaming at once in the cross-instance row.
const CROSS_SESSIONS: usize = 10;
/// How long a frame may take before the measurement fails.
const FRAME_WAIT: Duration = Duration::from_secs(30);

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    Ok(vec![cross_instance(ctx)?, takeover(ctx)?])
}

fn cross_instance(ctx: &Ctx) -> anyhow::Result<Row> {
    let tokens = ctx.scale.latency_tokens;
    let pace = Pace {
        tokens,
        delay_ms: TOKEN_PERIOD.as_millis() as u64,
    };
    let sessions = if ctx.scale.latency_tokens < 100 {
        2
    } else {
        CROSS_SESSIONS
    };
    let database = ScratchDatabase::create().map_err(anyhow::Error::msg)?;
    let (a, _) = InProcess::on_postgres(pace, database.url())?;
    let (b, _) = InProcess::on_postgres(pace, database.url())?;
    let measured = ctx.client.block_on(async {
        let runs = (0..sessions).map(|_| watch_on_both(&a.address, &b.address, tokens));
        try_join_all(runs).await
    });
    a.stop();
    b.stop();
    let (mut on_a, mut on_b, mut added) = (Vec::new(), Vec::new(), Vec::new());
    for (a_ns, b_ns) in measured?.into_iter().flatten() {
        on_a.push(a_ns);
        on_b.push(b_ns);
        added.push(a_ns.saturating_sub(b_ns));
    }
    let (on_a, on_b, added) = (
        Summary::of(&mut on_a),
        Summary::of(&mut on_b),
        Summary::of(&mut added),
    );
    Ok(Row::new(format!(
        "10a. cross-instance latency, {sessions} sessions at 50 tok/s: runs on B, socket on A \
         (p50 / p99 / p99.9)"
    ))
    .tandem(on_a.display_ms())
    .baseline(format!(
        "{} on B's own socket; A adds p50 {} / p99 {} ms",
        on_b.display_ms(),
        ms(added.p50_ns),
        ms(added.p99_ns)
    ))
    .ratio(on_a.p99_ns as f64 / on_b.p99_ns.max(1) as f64)
    .target(
        "A's p99 < 10 ms".to_string(),
        Verdict::of(on_a.p99_ns < CROSS_P99_TARGET),
    )
    .data(json!({"sessions": sessions, "tokens": tokens, "a": on_a, "b": on_b, "added": added})))
}

/// One session watched on A and on B while its run executes on B; per token, the
/// latency on A and on B.
async fn watch_on_both(a: &str, b: &str, tokens: u64) -> anyhow::Result<Vec<(u64, u64)>> {
    let session = Rest::new(a).create_session().await?;
    let mut on_a = client::connect(a, &session, 0).await?;
    let mut on_b = client::connect(b, &session, 0).await?;
    client::until_caught_up(&mut on_a, &mut SeqCheck::after(0)).await?;
    client::until_caught_up(&mut on_b, &mut SeqCheck::after(0)).await?;
    client::say(&mut on_b, "go").await?;
    let (seen_a, seen_b) = tokio::try_join!(token_latencies(on_a), token_latencies(on_b))?;
    if seen_a.len() != tokens as usize || seen_b.len() != tokens as usize {
        anyhow::bail!(
            "{} tokens on A and {} on B, not {tokens}",
            seen_a.len(),
            seen_b.len()
        );
    }
    Ok(seen_a.into_iter().zip(seen_b).collect())
}

/// Reads a run to its end, checking seqs; each token's latency in order.
async fn token_latencies(mut socket: Socket) -> anyhow::Result<Vec<u64>> {
    let (mut check, mut latencies) = (SeqCheck::after(0), Vec::new());
    loop {
        let text = client::next_text(&mut socket, FRAME_WAIT).await?;
        let received = now_ns();
        let frame = Frame::parse(&text)?;
        let seq = frame.seq.filter(|_| frame.kind == "event");
        check.take(seq.ok_or_else(|| anyhow::anyhow!("unexpected frame {text:.120}"))?)?;
        for yielded in frame.tokens_ns() {
            latencies.push(received.saturating_sub(yielded) as u64);
        }
        if frame.ends_run() {
            let _ = futures_util::SinkExt::close(&mut socket).await;
            return Ok(latencies);
        }
    }
}

fn takeover(ctx: &Ctx) -> anyhow::Result<Row> {
    let lease = if ctx.scale.latency_tokens < 100 {
        1_000
    } else {
        3_000
    };
    let database = ScratchDatabase::create().map_err(anyhow::Error::msg)?;
    let binary = tandem_binary()?;
    let lease_flag = lease.to_string();
    let flags = [
        "--run-lease-ms",
        &lease_flag,
        "--bench-tokens",
        "1000000",
        "--token-delay-ms",
        "5",
    ];
    let mut a = Tandem::spawn(&binary, database.url(), &flags)?;
    let mut b = Tandem::spawn(&binary, database.url(), &flags)?;
    let took = ctx.client.block_on(async {
        let http = reqwest::Client::new();
        a.wait_healthy(&http).await?;
        b.wait_healthy(&http).await?;
        let session = Rest::new(&a.address).create_session().await?;
        let mut on_b = client::connect(&b.address, &session, 0).await?;
        client::until_caught_up(&mut on_b, &mut SeqCheck::after(0)).await?;
        let path = format!("/api/sessions/{session}/messages");
        Rest::new(&a.address)
            .post(&path, json!({"text": "go"}))
            .await?;
        until(&mut on_b, |frame| !frame.tokens_ns().is_empty()).await?;
        let killed = Instant::now();
        a.kill();
        until(&mut on_b, |_| false).await?;
        anyhow::Ok(killed.elapsed())
    })?;
    let lease = Duration::from_millis(lease);
    Ok(Row::new(
        "10b. takeover: the owner SIGKILLed → its run continues on another instance",
    )
    .tandem(format!("{} ms", took.as_millis()))
    .baseline(format!("lease {} ms", lease.as_millis()))
    .ratio(took.as_secs_f64() / lease.as_secs_f64())
    .target("< 2× the lease".to_string(), Verdict::of(took < lease * 2))
    .data(json!({"takeover_ms": took.as_millis() as u64, "lease_ms": lease.as_millis() as u64})))
}

/// Reads until a frame `done` accepts, or (`done` never does) the recovery marker.
async fn until(socket: &mut Socket, done: impl Fn(&Frame) -> bool) -> anyhow::Result<()> {
    loop {
        let text = client::next_text(socket, FRAME_WAIT).await?;
        let frame = Frame::parse(&text)?;
        if done(&frame) || text.contains(shared::custom::RUN_RECOVERED) {
            return Ok(());
        }
    }
}
