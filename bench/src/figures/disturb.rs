//! What disturbs the live sessions of figure 14: a slow viewer on every session, or a
//! storm of sockets reconnecting at once. Everything a disturbing socket receives is
//! checked like any other: every seq once, in order.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use futures_util::future::join_all;
use serde::Serialize;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::client::{self, Frame, SeqCheck, Socket};

/// The receive buffer of a slow viewer's socket: small, so the server feels it at once.
const SLOW_BUFFER: u32 = 4 * 1024;
/// How long a slow viewer may wait for a frame once it reads again.
const DRAIN_WAIT: Duration = Duration::from_secs(30);

/// What runs beside the measured sessions.
#[derive(Debug, Clone, Copy)]
pub enum Disturbance {
    /// Nothing: the baseline.
    None,
    /// One more viewer per session, on a socket with a tiny receive buffer, that reads
    /// nothing until the measured runs have ended, then reads everything it was sent.
    SlowViewers,
    /// `sockets` sockets, spread over the sessions, connect at once with `after=0` when
    /// `at` has passed since the runs started, read what they missed up to `caught_up`,
    /// and close: viewers coming back after a load balancer dropped them all.
    ReconnectStorm { sockets: usize, at: Duration },
}

/// What a disturbance did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Disturbed {
    /// Disturbing sockets.
    pub sockets: usize,
    /// Event frames they received, all checked.
    pub frames: u64,
    /// From the storm's start until its last socket caught up (0 for slow viewers).
    pub storm_ms: f64,
}

/// A disturbance whose sockets are ready, before the runs start.
pub struct Prepared {
    kind: Disturbance,
    address: String,
    sessions: Vec<String>,
    slow: Vec<Socket>,
}

/// A disturbance under way.
pub struct Running {
    task: JoinHandle<anyhow::Result<Disturbed>>,
    runs_ended: Arc<Notify>,
}

impl Disturbance {
    /// Opens what must be open before the runs start (the slow viewers).
    pub async fn prepare(self, address: &str, sessions: &[String]) -> anyhow::Result<Prepared> {
        let mut slow = Vec::new();
        if let Self::SlowViewers = self {
            for session in sessions {
                let mut socket = client::connect_slow(address, session, 0, SLOW_BUFFER).await?;
                client::until_caught_up(&mut socket, &mut SeqCheck::after(0)).await?;
                slow.push(socket);
            }
        }
        Ok(Prepared {
            kind: self,
            address: address.to_string(),
            sessions: sessions.to_vec(),
            slow,
        })
    }
}

impl Prepared {
    /// Starts the disturbance as the runs start; each run streams `tokens` tokens.
    pub fn start(self, tokens: u64) -> Running {
        let runs_ended = Arc::new(Notify::new());
        let ended = runs_ended.clone();
        let task = tokio::spawn(async move {
            match self.kind {
                Disturbance::None => Ok(Disturbed::default()),
                Disturbance::SlowViewers => {
                    ended.notified().await;
                    drain(self.slow, tokens).await
                }
                Disturbance::ReconnectStorm { sockets, at } => {
                    tokio::time::sleep(at).await;
                    storm(&self.address, &self.sessions, sockets).await
                }
            }
        });
        Running { task, runs_ended }
    }
}

impl Running {
    /// Says the measured runs have ended and waits for the disturbance to finish.
    pub async fn finish(self) -> anyhow::Result<Disturbed> {
        self.runs_ended.notify_one();
        self.task
            .await
            .map_err(|e| anyhow!("the disturbance failed: {e}"))?
    }
}

/// Reads each slow viewer's whole run, checking every frame.
async fn drain(sockets: Vec<Socket>, tokens: u64) -> anyhow::Result<Disturbed> {
    let count = sockets.len();
    let frames = join_all(sockets.into_iter().map(|socket| read_run(socket, tokens))).await;
    let frames = frames.into_iter().sum::<anyhow::Result<u64>>()?;
    Ok(Disturbed {
        sockets: count,
        frames,
        storm_ms: 0.0,
    })
}

/// Reads one socket to the end of its session's run; the event frames it read.
async fn read_run(mut socket: Socket, tokens: u64) -> anyhow::Result<u64> {
    let mut check = SeqCheck::after(0);
    let mut seen = 0;
    loop {
        let text = client::next_text(&mut socket, DRAIN_WAIT).await?;
        let frame = Frame::parse(&text)?;
        check
            .take(
                frame
                    .seq
                    .context("a slow viewer got a frame without a seq")?,
            )
            .context("a slow viewer")?;
        seen += frame.tokens_ns().len() as u64;
        if frame.ends_run() {
            break;
        }
    }
    let _ = socket.close(None).await;
    if seen != tokens {
        bail!("a slow viewer got {seen} tokens, not {tokens}");
    }
    Ok(check.last)
}

/// Connects `sockets` sockets at once with `after=0`, each read up to `caught_up`.
async fn storm(address: &str, sessions: &[String], sockets: usize) -> anyhow::Result<Disturbed> {
    let started = Instant::now();
    let reconnects = (0..sockets).map(|i| async move {
        let mut socket = client::connect(address, &sessions[i % sessions.len()], 0).await?;
        let seq = client::until_caught_up(&mut socket, &mut SeqCheck::after(0)).await?;
        let _ = socket.close(None).await;
        anyhow::Ok(seq)
    });
    let frames = join_all(reconnects).await;
    let frames = frames.into_iter().sum::<anyhow::Result<u64>>()?;
    Ok(Disturbed {
        sockets,
        frames,
        storm_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}
