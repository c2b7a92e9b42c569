//! Figure 11, burst: N sessions (one socket each) all sent one message at once, each
//! reply 500 tokens with no pacing. Aggregate tokens per second from the first message
//! to the last reply's end (deltas that reach the writer together are one event, so
//! frames undercount the work as the load rises: frames per token is shown beside it),
//! and each reply's completion time (message sent → its `RUN_FINISHED` received), next
//! to the same app on the no-op store in the same run. Each session count is measured by
//! several alternating pairs (Tandem, then the no-op store; each on a fresh app) and the
//! row shows the pair with the median ratio. Every frame's seq is checked.

use std::time::{Duration, Instant};

use serde_json::json;
use tandem::store::ScratchDatabase;
use tokio::task::JoinSet;

use super::{live, Ctx};
use crate::client::{self, Frame, SeqCheck, Socket};
use crate::report::{Row, Verdict};
use crate::server::{InProcess, Pace};
use crate::stats::{ms, per_second, thousands, Summary};

/// The target: Tandem's frames/s at least this share of the no-op store's.
const TARGET_RATIO: f64 = 0.7;
/// How long a socket may wait for its next frame.
const FRAME_WAIT: Duration = Duration::from_secs(60);

/// What one burst saw.
#[derive(Debug, Default)]
pub(super) struct Burst {
    pub(super) frames: u64,
    /// Tokens the replies carried (sessions × tokens a reply).
    tokens: u64,
    elapsed: Duration,
    completion: Summary,
    pub(super) errors: Vec<String>,
}

impl Burst {
    fn frames_per_second(&self) -> f64 {
        self.frames as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn tokens_per_second(&self) -> f64 {
        self.tokens as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Frames a viewer got per token (each reply's few run events included).
    fn frames_per_token(&self) -> f64 {
        self.frames as f64 / self.tokens.max(1) as f64
    }

    /// Its figures for the report's JSON.
    fn data(&self) -> serde_json::Value {
        json!({"frames": self.frames, "seconds": self.elapsed.as_secs_f64(),
            "frames_per_second": self.frames_per_second(),
            "tokens_per_second": self.tokens_per_second(),
            "frames_per_token": self.frames_per_token(), "completion": self.completion})
    }

    fn shown(&self) -> String {
        format!(
            "{} tokens/s ({:.2} frames a token), reply {} / {} ms",
            per_second(self.tokens_per_second()).trim_end_matches("/s"),
            self.frames_per_token(),
            ms(self.completion.p50_ns),
            ms(self.completion.p99_ns)
        )
    }
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    rows(ctx, false)
}

/// The burst rows on SQLite, or on a fresh PostgreSQL database each (figure 9).
pub(super) fn rows(ctx: &Ctx, on_postgres: bool) -> anyhow::Result<Vec<Row>> {
    let pace = Pace {
        tokens: ctx.scale.burst_tokens,
        delay_ms: 0,
    };
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for &sessions in &ctx.scale.burst_sessions {
        let tokens = ctx.scale.burst_tokens;
        let measure = |app: &InProcess| {
            let mut measured = ctx.client.block_on(burst(&app.address, sessions))?;
            measured.tokens = sessions as u64 * tokens;
            anyhow::Ok(measured)
        };
        let named = |burst: &Burst, what: &str| {
            burst
                .errors
                .iter()
                .map(|e| format!("{sessions} sessions{what}: {e}"))
                .collect::<Vec<_>>()
        };
        // A small burst is over in tens of milliseconds: more pairs for the same confidence.
        let count = ctx.scale.burst_pairs.max(1) * (100 / sessions.max(1)).clamp(1, 5);
        let mut pairs = Vec::with_capacity(count);
        for _ in 0..count {
            let tandem = match on_postgres {
                false => {
                    let (app, _store) = InProcess::on_sqlite(pace)?;
                    let tandem = measure(&app)?;
                    app.stop();
                    tandem
                }
                true => {
                    let database = ScratchDatabase::create().map_err(anyhow::Error::msg)?;
                    let (app, _store) = InProcess::on_postgres(pace, database.url())?;
                    let tandem = measure(&app)?;
                    app.stop();
                    tandem
                }
            };
            let app = InProcess::on_noop(pace)?;
            let baseline = measure(&app)?;
            app.stop();
            errors.extend(named(&tandem, ""));
            errors.extend(named(&baseline, ", no-op store"));
            pairs.push(Pair { tandem, baseline });
        }
        let figure = match on_postgres {
            false => "11. burst",
            true => "9e. PostgreSQL burst",
        };
        rows.push(row(figure, sessions, tokens, pairs));
    }
    if !errors.is_empty() {
        anyhow::bail!("burst: {}", errors.join("; "));
    }
    Ok(rows)
}

/// One burst on Tandem and the next on the no-op store, with the same sessions.
struct Pair {
    tandem: Burst,
    baseline: Burst,
}

impl Pair {
    fn ratio(&self) -> f64 {
        self.tandem.tokens_per_second() / self.baseline.tokens_per_second().max(1e-9)
    }
}

/// Opens `sessions` caught-up sockets, then sends every one its message at once.
pub(super) async fn burst(address: &str, sessions: usize) -> anyhow::Result<Burst> {
    let sockets = live::open(address, sessions).await?;
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    for socket in sockets {
        tasks.spawn(reply(socket));
    }
    let mut burst = Burst::default();
    let mut completions = Vec::with_capacity(sessions);
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(Ok((frames, took))) => {
                burst.frames += frames;
                completions.push(took.as_nanos() as u64);
            }
            Ok(Err(error)) => burst.errors.push(format!("{error:#}")),
            Err(panic) => burst.errors.push(format!("a client task failed: {panic}")),
        }
    }
    burst.elapsed = started.elapsed();
    burst.completion = Summary::of(&mut completions);
    Ok(burst)
}

/// Sends the message and reads the whole reply; its frames and how long it took.
async fn reply(mut socket: Socket) -> anyhow::Result<(u64, Duration)> {
    let sent = Instant::now();
    client::say(&mut socket, "go").await?;
    let mut check = SeqCheck::after(0);
    let mut frames = 0;
    loop {
        let text = client::next_text(&mut socket, FRAME_WAIT).await?;
        let frame = Frame::parse(&text)?;
        let Some(seq) = frame.seq.filter(|_| frame.kind == "event") else {
            anyhow::bail!("unexpected frame {text:.120}");
        };
        check.take(seq)?;
        frames += 1;
        if frame.ends_run() {
            let took = sent.elapsed();
            let _ = socket.close(None).await;
            return Ok((frames, took));
        }
    }
}

/// The row of one session count: the pair whose ratio is the median of the pairs'
/// ([`super::pairs`]; a burst of 10 sessions lasts about 20 ms, so one pair alone moves
/// by a third between runs), with every pair's figures in the data.
fn row(figure: &str, sessions: usize, tokens: u64, mut pairs: Vec<Pair>) -> Row {
    let (median, spread) = super::pairs::sort_to_median(&mut pairs, Pair::ratio);
    let median = &pairs[median];
    let ratio = median.ratio();
    Row::new(format!(
        "{figure}, {} sessions × {tokens} tokens (tokens/s, reply p50/p99)",
        thousands(sessions as u64)
    ))
    .tandem(format!("{}{spread}", median.tandem.shown()))
    .baseline(format!("{} no-op store", median.baseline.shown()))
    .ratio(ratio)
    .target(
        format!("≥ {TARGET_RATIO} of the no-op store"),
        Verdict::of(ratio >= TARGET_RATIO),
    )
    .data(json!({
        "sessions": sessions, "tokens": tokens,
        "tandem": median.tandem.data(), "noop_store": median.baseline.data(),
        "pairs": pairs.iter().map(|pair| json!({
            "ratio": pair.ratio(), "tandem": pair.tandem.data(),
            "noop_store": pair.baseline.data(),
        })).collect::<Vec<_>>(),
    }))
}
