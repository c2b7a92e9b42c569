//! Figure 5, resume: a client that missed a backlog reconnects with `after=<seq>`; time
//! from connecting to the first missed event and to `caught_up`, p50/p99 over repeated
//! reconnects, for a 1,000- and a 100,000-event backlog. Baseline: the bare
//! tokio-tungstenite server sending the same missed frames.

use std::time::{Duration, Instant};

use anyhow::bail;
use serde_json::json;

use super::streaming::{frames_after, Bare};
use super::Ctx;
use crate::client::{self, event_seq, Frame, SeqCheck};
use crate::report::{Row, Verdict};
use crate::seed;
use crate::server::{InProcess, Pace};
use crate::stats::{ms, thousands, Summary};

/// Events the client had already seen before it dropped.
const SEEN: usize = 1_000;
/// The target for the 1,000-event backlog: `caught_up` p99 under 20 ms.
const TARGET_NS: u64 = 20_000_000;

/// Times of one reconnect.
struct Reconnect {
    first_event: Duration,
    caught_up: Duration,
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let (app, store) = InProcess::on_sqlite(Pace {
        tokens: 1,
        delay_ms: 0,
    })?;
    let mut rows = Vec::new();
    for &(backlog, reps) in &ctx.scale.resume {
        let session = app
            .block_on(seed::backlog(&*store, SEEN + backlog))?
            .to_string();
        let after = SEEN as u64;
        let bare = Bare::start(app.block_on(frames_after(&*store, &session, after))?)?;
        let (mut tandem, mut baseline) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            tandem.push(
                ctx.client
                    .block_on(reconnect(&app.address, &session, after, backlog))?,
            );
            baseline.push(ctx.client.block_on(reconnect(
                &bare.address,
                &session,
                after,
                backlog,
            ))?);
        }
        rows.push(row(backlog, &tandem, &baseline));
    }
    app.stop();
    Ok(rows)
}

/// One reconnect, every seq checked.
async fn reconnect(
    address: &str,
    session: &str,
    after: u64,
    backlog: usize,
) -> anyhow::Result<Reconnect> {
    let started = Instant::now();
    let mut socket = client::connect(address, session, after).await?;
    let mut check = SeqCheck::after(after);
    let mut first_event = None;
    loop {
        let text = client::next_text(&mut socket, Duration::from_secs(60)).await?;
        if let Some(seq) = event_seq(&text) {
            first_event.get_or_insert_with(|| started.elapsed());
            check.take(seq)?;
            continue;
        }
        let frame = Frame::parse(&text)?;
        if frame.kind != "caught_up" || frame.seq != Some(check.last) {
            bail!("unexpected frame {text:.120}");
        }
        break;
    }
    let caught_up = started.elapsed();
    let _ = socket.close(None).await;
    if check.last - after != backlog as u64 {
        bail!(
            "resume sent {} events, expected {backlog}",
            check.last - after
        );
    }
    Ok(Reconnect {
        first_event: first_event.unwrap_or(caught_up),
        caught_up,
    })
}

fn summary(reconnects: &[Reconnect], pick: fn(&Reconnect) -> Duration) -> Summary {
    let mut samples: Vec<u64> = reconnects
        .iter()
        .map(|r| pick(r).as_nanos() as u64)
        .collect();
    Summary::of(&mut samples)
}

fn row(backlog: usize, tandem: &[Reconnect], baseline: &[Reconnect]) -> Row {
    let (t_first, t_done) = (
        summary(tandem, |r| r.first_event),
        summary(tandem, |r| r.caught_up),
    );
    let (b_first, b_done) = (
        summary(baseline, |r| r.first_event),
        summary(baseline, |r| r.caught_up),
    );
    let shown = |first: &Summary, done: &Summary| {
        format!(
            "first {} / {} ms, caught_up {} / {} ms",
            ms(first.p50_ns),
            ms(first.p99_ns),
            ms(done.p50_ns),
            ms(done.p99_ns)
        )
    };
    let (target, verdict) = if backlog == 1_000 {
        (
            "caught_up p99 < 20 ms".into(),
            Verdict::of(t_done.p99_ns < TARGET_NS),
        )
    } else {
        ("-".to_string(), Verdict::Info)
    };
    Row::new(format!(
        "5. resume, {}-event backlog ×{} (p50 / p99)",
        thousands(backlog as u64),
        tandem.len()
    ))
    .tandem(shown(&t_first, &t_done))
    .baseline(format!("{} bare", shown(&b_first, &b_done)))
    .ratio(t_done.p99_ns as f64 / b_done.p99_ns.max(1) as f64)
    .target(target, verdict)
    .data(
        json!({"backlog": backlog, "first_event": t_first, "caught_up": t_done,
        "bare_first_event": b_first, "bare_caught_up": b_done}),
    )
}
