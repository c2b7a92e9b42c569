//! Figure 7, memory: resident memory (VmRSS) of the real binary per idle socket, per
//! live session, per paused session, and while a client that stopped reading has a
//! session streaming at full speed (it must stay bounded: the socket lags and later
//! catches up from the log). Each step samples before and after on the same process.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::ensure;
use futures_util::{stream, StreamExt};
use serde_json::{json, Value};

use super::Ctx;
use crate::child::{tandem_binary, Tandem};
use crate::client::{self, Frame, Rest, SeqCheck, Socket};
use crate::report::{Row, Verdict};
use crate::stats::{bytes, thousands};

/// The target per idle socket.
const IDLE_TARGET: f64 = 64.0 * 1024.0;
/// Growth allowed in the second half of the unread stream for it to count as bounded.
const BOUNDED_SLACK: f64 = 4.0 * 1024.0 * 1024.0;
/// Longest the unread stream may run (the socket's heartbeat must not close it).
const UNREAD_LIMIT: Duration = Duration::from_secs(25);
/// How often the unread stream's memory is sampled: often enough that a stream of a few
/// seconds gives the halves compared dozens of samples each.
const UNREAD_SAMPLE: Duration = Duration::from_millis(50);
/// Time for tasks to reach a steady state before a sample.
const SETTLE: Duration = Duration::from_millis(500);

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let binary = tandem_binary()?;
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("tandem.db").display());
    let live_tokens = if ctx.smoke { "50" } else { "300" };
    let extra = [
        "--bench-tokens",
        live_tokens,
        "--token-delay-ms",
        "20",
        "--heartbeat-interval-ms",
        "10000",
        "--client-timeout-ms",
        "600000",
        // The unread stream is long enough for its halves to be compared (a run's
        // default limit is 100,000 events, under a second of streaming here).
        "--max-run-events",
        "1000000",
    ];
    let mut tandem = Tandem::spawn(&binary, &url, &extra)?;
    let rest = Rest::new(&tandem.address);
    let scale = &ctx.scale;
    ctx.client.block_on(async {
        tandem.wait_healthy(&rest.http).await?;
        let warm = create(&rest, 1).await?;
        post_all(&rest, &warm, "warm up tokens=5 delay_ms=0").await?;
        wait_all(&rest, &warm, "idle").await?;
        tokio::time::sleep(SETTLE).await;
        let start = tandem.rss()?;
        let idle = idle_sockets(&tandem, &rest, scale.idle_sockets).await?;
        let live = sessions_in(&tandem, &rest, scale.live_sessions, "go", "running").await?;
        let paused = sessions_in(
            &tandem,
            &rest,
            scale.paused_sessions,
            "pause",
            "awaiting_input",
        )
        .await?;
        let unread = unread(&tandem, &rest, scale.unread_tokens).await?;
        Ok(vec![
            Row::new(format!(
                "7. memory: RSS per idle socket ({} sockets)",
                thousands(scale.idle_sockets as u64)
            ))
            .tandem(bytes(idle))
            .baseline(format!("process at start: {}", bytes(start as f64)))
            .target("≤ 64 KiB", Verdict::of(idle <= IDLE_TARGET))
            .data(json!({"bytes_per_socket": idle, "start_rss": start})),
            Row::new(format!(
                "7. memory: RSS per live session ({} at 50 tokens/s)",
                thousands(scale.live_sessions as u64)
            ))
            .tandem(bytes(live))
            .data(json!({"bytes_per_session": live})),
            Row::new(format!(
                "7. memory: RSS per paused session ({})",
                thousands(scale.paused_sessions as u64)
            ))
            .tandem(bytes(paused))
            .target("~0 (rows only)", Verdict::Info)
            .data(json!({"bytes_per_session": paused})),
            unread,
        ])
    })
}

/// Creates `count` sessions.
async fn create(rest: &Rest, count: usize) -> anyhow::Result<Vec<String>> {
    stream::iter(0..count)
        .map(|_| rest.create_session())
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect()
}

/// Posts `text` to every session.
async fn post_all(rest: &Rest, ids: &[String], text: &str) -> anyhow::Result<()> {
    let posted: Vec<anyhow::Result<Value>> = stream::iter(ids)
        .map(|id| async move {
            let path = format!("/api/sessions/{id}/messages");
            rest.post(&path, json!({ "text": text })).await
        })
        .buffer_unordered(32)
        .collect()
        .await;
    posted.into_iter().try_for_each(|r| r.map(drop))
}

/// Bytes per socket: sessions created first, then one caught-up socket on each.
async fn idle_sockets(tandem: &Tandem, rest: &Rest, count: usize) -> anyhow::Result<f64> {
    let ids = create(rest, count).await?;
    tokio::time::sleep(SETTLE).await;
    let before = tandem.rss()?;
    let sockets: Vec<anyhow::Result<Socket>> = stream::iter(&ids)
        .map(|id| async move {
            let mut socket = client::connect(&tandem.address, id, 0).await?;
            client::until_caught_up(&mut socket, &mut SeqCheck::after(0)).await?;
            Ok(socket)
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let sockets: Vec<Socket> = sockets.into_iter().collect::<anyhow::Result<_>>()?;
    tokio::time::sleep(SETTLE).await;
    let after = tandem.rss()?;
    drop(sockets);
    Ok((after as f64 - before as f64) / count as f64)
}

/// Bytes per session: `count` sessions sent `text`, sampled once all are in `status`.
async fn sessions_in(
    tandem: &Tandem,
    rest: &Rest,
    count: usize,
    text: &str,
    status: &str,
) -> anyhow::Result<f64> {
    let ids = create(rest, count).await?;
    tokio::time::sleep(SETTLE).await;
    let before = tandem.rss()?;
    post_all(rest, &ids, text).await?;
    wait_all(rest, &ids, status).await?;
    tokio::time::sleep(SETTLE).await;
    let after = tandem.rss()?;
    if status == "running" {
        wait_all(rest, &ids, "idle").await?;
    }
    Ok((after as f64 - before as f64) / count as f64)
}

/// Waits until every session of `ids` is in `status`.
async fn wait_all(rest: &Rest, ids: &[String], status: &str) -> anyhow::Result<()> {
    let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let list = rest.get("/api/sessions").await?;
        let sessions = list["sessions"].as_array().cloned().unwrap_or_default();
        let count = sessions
            .iter()
            .filter(|s| s["status"] == status)
            .filter(|s| s["id"].as_str().is_some_and(|id| wanted.contains(id)))
            .count();
        if count == ids.len() {
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "only {count} of {} sessions reached {status}",
            ids.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A session streaming `tokens` at full speed to a socket that reads nothing until
/// the run ends (or the limit); then every frame must still arrive, in order.
async fn unread(tandem: &Tandem, rest: &Rest, tokens: u64) -> anyhow::Result<Row> {
    let id = create(rest, 1).await?.remove(0);
    let mut socket = client::connect(&tandem.address, &id, 0).await?;
    client::until_caught_up(&mut socket, &mut SeqCheck::after(0)).await?;
    let before = tandem.rss()? as f64;
    post_all(
        rest,
        std::slice::from_ref(&id),
        &format!("go tokens={tokens} delay_ms=0"),
    )
    .await?;
    let started = Instant::now();
    let mut samples = Vec::new();
    while started.elapsed() < UNREAD_LIMIT {
        tokio::time::sleep(UNREAD_SAMPLE).await;
        samples.push(tandem.rss()? as f64);
        let session = rest.get(&format!("/api/sessions/{id}")).await?;
        if session["status"] != "running" {
            break;
        }
    }
    let streamed = rest.get(&format!("/api/sessions/{id}")).await?["lastSeq"]
        .as_u64()
        .unwrap_or(0);
    let received = read_to_end(&mut socket, streamed).await?;
    ensure!(
        received == streamed,
        "the unread socket got {received} of {streamed} events"
    );
    let peak = samples.iter().copied().fold(before, f64::max) - before;
    let half = samples.len() / 2;
    let max_of = |s: &[f64]| s.iter().copied().fold(before, f64::max);
    let late_growth = max_of(&samples[half..]) - max_of(&samples[..half]);
    let bounded = late_growth <= BOUNDED_SLACK;
    Ok(Row::new(format!(
        "7. memory: client that stops reading ({} events streamed)",
        thousands(streamed)
    ))
    .tandem(format!(
        "peak +{}, second half +{}",
        bytes(peak),
        bytes(late_growth)
    ))
    .target("bounded", Verdict::of(bounded))
    .data(
        json!({"events": streamed, "peak_growth": peak, "late_growth": late_growth,
            "seconds": started.elapsed().as_secs_f64(), "samples": samples}),
    ))
}

/// Reads events until seq `last`, checking each; returns the last seq read.
async fn read_to_end(socket: &mut Socket, last: u64) -> anyhow::Result<u64> {
    let mut check = SeqCheck::after(0);
    while check.last < last {
        let text = client::next_text(socket, Duration::from_secs(30)).await?;
        let frame = Frame::parse(&text)?;
        if let (Some(seq), "event") = (frame.seq, frame.kind.as_ref()) {
            check.take(seq)?;
        }
    }
    Ok(check.last)
}
