//! Live sessions streaming `bench` tokens at 50 per second, one socket watching each:
//! the harness of the latency (2) and capacity (4) figures.
//!
//! Every session is created and its socket caught up before any run starts; runs start
//! spread over one token period, like independent users. Each token's latency is the
//! client's receive time minus the time the engine yielded it (same host clock).
//! Every frame's seq is checked: a gap, a repeat or a missing token is a correctness
//! error; a timeout or refused connection is only a sign of overload. A [`Disturbance`]
//! may run beside them (figure 14).

use std::time::Duration;

use futures_util::{stream, StreamExt};
use tokio::task::JoinSet;

use super::disturb::{Disturbance, Disturbed};
use crate::client::{self, now_ns, Frame, Rest, SeqCheck, Socket};
use crate::stats::Summary;

/// The pace the issue asks for: 50 tokens per second.
pub const TOKEN_PERIOD: Duration = Duration::from_millis(20);
/// How long a socket may wait for its next frame before the session counts as failed.
const FRAME_WAIT: Duration = Duration::from_secs(20);
/// Sessions created or sockets opened at once.
const SETUP_CONCURRENCY: usize = 32;

/// What one measurement saw.
#[derive(Debug, Default)]
pub struct Live {
    pub latency: Summary,
    /// Sessions that streamed every token in order.
    pub sessions_ok: usize,
    /// Overload signs (timeouts, refused connections), not correctness problems.
    pub problems: Vec<String>,
    /// Lost, repeated or out-of-order frames, missing tokens.
    pub errors: Vec<String>,
    /// What the disturbance beside the sessions did, if it ran to its end.
    pub disturbed: Option<Disturbed>,
}

enum Trouble {
    Overload(String),
    Incorrect(String),
}

/// Runs `sessions` live sessions of `tokens` tokens each against the app at `address`
/// (started with `--bench-tokens tokens --token-delay-ms 20`); ignores each session's
/// first `warmup` tokens.
pub async fn measure(address: &str, sessions: usize, tokens: u64, warmup: u64) -> Live {
    measure_disturbed(address, sessions, tokens, warmup, Disturbance::None).await
}

/// [`measure`] with the sessions spread evenly over several instances of the app (one
/// database): each session is created, run and watched on one of `addresses`.
pub async fn measure_spread(addresses: &[&str], sessions: usize, tokens: u64, warmup: u64) -> Live {
    measure_on(addresses, sessions, tokens, warmup, Disturbance::None).await
}

/// [`measure`] with `disturbance` running beside the sessions.
pub async fn measure_disturbed(
    address: &str,
    sessions: usize,
    tokens: u64,
    warmup: u64,
    disturbance: Disturbance,
) -> Live {
    measure_on(&[address], sessions, tokens, warmup, disturbance).await
}

/// The sessions spread over `addresses`; the disturbance (if any) acts on the first.
async fn measure_on(
    addresses: &[&str],
    sessions: usize,
    tokens: u64,
    warmup: u64,
    disturbance: Disturbance,
) -> Live {
    let mut live = Live::default();
    let prepared = async {
        let mut opened = Vec::with_capacity(sessions);
        for (index, address) in addresses.iter().enumerate() {
            // The first `sessions % n` instances take one session more.
            let share =
                sessions / addresses.len() + usize::from(index < sessions % addresses.len());
            opened.extend(open_sessions(address, share).await?);
        }
        let (ids, sockets): (Vec<_>, Vec<_>) = opened.into_iter().unzip();
        let disturbance = disturbance.prepare(addresses[0], &ids).await?;
        anyhow::Ok((sockets, disturbance))
    };
    let (sockets, disturbance) = match prepared.await {
        Ok(ready) => ready,
        Err(error) => {
            live.problems.push(format!("setup: {error:#}"));
            return live;
        }
    };
    let disturbance = disturbance.start(tokens);
    let mut tasks = JoinSet::new();
    for (index, socket) in sockets.into_iter().enumerate() {
        let offset = TOKEN_PERIOD.mul_f64(index as f64 / sessions as f64);
        tasks.spawn(watch(socket, offset, tokens, warmup));
    }
    let mut samples = Vec::with_capacity(sessions * tokens as usize);
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(Ok(session)) => {
                live.sessions_ok += 1;
                samples.extend(session);
            }
            Ok(Err(Trouble::Overload(why))) => live.problems.push(why),
            Ok(Err(Trouble::Incorrect(why))) => live.errors.push(why),
            Err(panic) => live.errors.push(format!("a client task failed: {panic}")),
        }
    }
    live.latency = Summary::of(&mut samples);
    match disturbance.finish().await {
        Ok(disturbed) => live.disturbed = Some(disturbed),
        Err(error) => live.errors.push(format!("{error:#}")),
    }
    live
}

/// Creates the sessions and opens a caught-up socket on each.
pub async fn open(address: &str, sessions: usize) -> anyhow::Result<Vec<Socket>> {
    let opened = open_sessions(address, sessions).await?;
    Ok(opened.into_iter().map(|(_, socket)| socket).collect())
}

/// Creates the sessions and opens a caught-up socket on each; their ids and sockets.
async fn open_sessions(address: &str, sessions: usize) -> anyhow::Result<Vec<(String, Socket)>> {
    let rest = Rest::new(address);
    let ids: Vec<anyhow::Result<String>> = stream::iter(0..sessions)
        .map(|_| rest.create_session())
        .buffer_unordered(SETUP_CONCURRENCY)
        .collect()
        .await;
    let opened: Vec<anyhow::Result<(String, Socket)>> = stream::iter(ids)
        .map(|id| async move {
            let id = id?;
            let mut socket = client::connect(address, &id, 0).await?;
            client::until_caught_up(&mut socket, &mut SeqCheck::after(0)).await?;
            Ok((id, socket))
        })
        .buffer_unordered(SETUP_CONCURRENCY)
        .collect()
        .await;
    opened.into_iter().collect()
}

/// Starts the session's run after `offset` and reads it to its end.
async fn watch(
    mut socket: Socket,
    offset: Duration,
    tokens: u64,
    warmup: u64,
) -> Result<Vec<u64>, Trouble> {
    tokio::time::sleep(offset).await;
    client::say(&mut socket, "go")
        .await
        .map_err(|e| Trouble::Overload(format!("send: {e}")))?;
    let mut check = SeqCheck::after(0);
    let mut samples = Vec::with_capacity(tokens as usize);
    let mut seen = 0;
    loop {
        let text = client::next_text(&mut socket, FRAME_WAIT)
            .await
            .map_err(|e| Trouble::Overload(format!("after seq {}: {e}", check.last)))?;
        let received = now_ns();
        let frame = Frame::parse(&text).map_err(|e| Trouble::Incorrect(e.to_string()))?;
        let Some(seq) = frame.seq.filter(|_| frame.kind == "event") else {
            return Err(Trouble::Incorrect(format!("unexpected frame {text:.120}")));
        };
        check
            .take(seq)
            .map_err(|e| Trouble::Incorrect(e.to_string()))?;
        for yielded in frame.tokens_ns() {
            if seen >= warmup {
                samples.push(received.saturating_sub(yielded) as u64);
            }
            seen += 1;
        }
        if frame.ends_run() {
            break;
        }
    }
    let _ = socket.close(None).await;
    if seen != tokens {
        return Err(Trouble::Incorrect(format!(
            "the run streamed {seen} tokens, not {tokens}"
        )));
    }
    Ok(samples)
}
