//! Figure 15, branches: what a fork costs as the parent's log grows (1,000, 10,000 and
//! 100,000 events; it shares the prefix, so it should not grow), and a socket's replay
//! of a branch (half its history its parent's rows) next to the replay of a plain session
//! of the same length.

use std::time::Instant;

use serde_json::json;
use tandem::domain::{now_ms, SessionId};
use tandem::store::{EventLog, Fork, NewBranch};

use super::streaming::{median, replay};
use super::Ctx;
use crate::report::{Row, Verdict};
use crate::seed;
use crate::server::{InProcess, Pace};
use crate::stats::{ms, per_second, thousands, Summary};

/// Forks timed per parent size.
const FORKS: usize = 20;
/// The fork's target, whatever the parent's length.
const FORK_TARGET_MS: f64 = 5.0;
/// The branch's replay's target, as a share of the plain session's.
const REPLAY_TARGET: f64 = 0.9;

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let (app, store) = InProcess::on_sqlite(Pace {
        tokens: 1,
        delay_ms: 0,
    })?;
    let mut rows = Vec::new();
    for &events in &ctx.scale.history_events {
        let parent = app.block_on(seed::backlog(&*store, events))?;
        let mut took = Vec::with_capacity(FORKS);
        for _ in 0..FORKS {
            let fork = Fork {
                parent,
                at_seq: events as u64,
            };
            let started = Instant::now();
            let branch = NewBranch::new(SessionId::generate(), fork, now_ms());
            let made = app.block_on(store.fork_session(branch))?;
            took.push(started.elapsed().as_nanos() as u64);
            anyhow::ensure!(made.is_some(), "the fork was refused");
        }
        let summary = Summary::of(&mut took);
        let p50_ms = summary.p50_ns as f64 / 1e6;
        rows.push(
            Row::new(format!(
                "15. fork of a {}-event session (p50 / p99)",
                thousands(events as u64)
            ))
            .tandem(format!(
                "{} / {} ms",
                ms(summary.p50_ns),
                ms(summary.p99_ns)
            ))
            .baseline("-")
            .target(
                format!("< {FORK_TARGET_MS} ms, flat"),
                Verdict::of(p50_ms < FORK_TARGET_MS),
            )
            .data(json!({"events": events, "p50_ns": summary.p50_ns, "p99_ns": summary.p99_ns})),
        );
    }

    // A branch of `backlog` events, half of them its parent's, next to a plain session.
    let events = ctx.scale.backlog;
    let half = events / 2;
    let plain = app.block_on(seed::backlog(&*store, events))?.to_string();
    let parent = app.block_on(seed::backlog(&*store, half))?;
    let branch = SessionId::generate();
    let fork = Fork {
        parent,
        at_seq: half as u64,
    };
    app.block_on(store.fork_session(NewBranch::new(branch, fork, now_ms())))?
        .ok_or_else(|| anyhow::anyhow!("the fork was refused"))?;
    app.block_on(seed::extend(&*store, branch, events - half))?;
    let branch = branch.to_string();
    let (mut of_branch, mut of_plain) = (Vec::new(), Vec::new());
    for _ in 0..ctx.scale.stream_reps {
        of_branch.push(
            ctx.client
                .block_on(replay(&app.address, &branch, 0, events))?,
        );
        of_plain.push(
            ctx.client
                .block_on(replay(&app.address, &plain, 0, events))?,
        );
    }
    app.stop();
    let (of_branch, of_plain) = (median(&mut of_branch), median(&mut of_plain));
    let ratio = of_branch / of_plain;
    rows.push(
        Row::new(format!(
            "15. replay of a {}-event branch (half shared) (frames/s)",
            thousands(events as u64)
        ))
        .tandem(per_second(of_branch))
        .baseline(format!("{} plain session", per_second(of_plain)))
        .ratio(ratio)
        .target(
            format!("≥ {REPLAY_TARGET} of plain"),
            Verdict::of(ratio >= REPLAY_TARGET),
        )
        .data(json!({"events": events, "branch_fps": of_branch, "plain_fps": of_plain})),
    );
    Ok(rows)
}
