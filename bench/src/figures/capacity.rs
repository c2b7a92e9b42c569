//! Figure 4, capacity: the most live sessions at 50 tokens/s each that keep p99
//! latency under 10 ms with no lost or duplicated frame. A bounded search over fixed
//! steps on a fresh app each, stopping at the first step that fails or when the time
//! budget is spent. The same search runs on PostgreSQL (figure 9) with one instance and
//! with two sharing the database, the sessions spread over both.

use std::time::Instant;

use serde_json::json;
use tandem::store::ScratchDatabase;

use super::live::{self, TOKEN_PERIOD};
use super::Ctx;
use crate::report::{Row, Verdict};
use crate::server::{InProcess, Pace};
use crate::stats::{ms, thousands};

/// The latency bound of a passing step, in nanoseconds.
const P99_BOUND: u64 = 10_000_000;
/// The target on SQLite.
const TARGET: usize = 1_000;
/// The target on PostgreSQL with two instances.
const TWO_INSTANCE_TARGET: usize = 2_000;

/// Where the apps of a step run.
#[derive(Debug, Clone, Copy)]
pub(super) enum Deployment {
    /// One instance on a fresh SQLite file (what ships).
    Sqlite,
    /// This many instances on one fresh PostgreSQL database.
    Postgres(usize),
}

impl Deployment {
    /// Starts the apps of one step; the database (if any) must outlive them.
    fn launch(self, pace: Pace) -> anyhow::Result<(Vec<InProcess>, Option<ScratchDatabase>)> {
        match self {
            Self::Sqlite => Ok((vec![InProcess::on_sqlite(pace)?.0], None)),
            Self::Postgres(instances) => {
                let database = ScratchDatabase::create().map_err(anyhow::Error::msg)?;
                let apps = (0..instances)
                    .map(|_| Ok(InProcess::on_postgres(pace, database.url())?.0))
                    .collect::<anyhow::Result<Vec<_>>>()?;
                Ok((apps, Some(database)))
            }
        }
    }
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let row = ladder(ctx, Deployment::Sqlite)?;
    Ok(vec![row])
}

/// The capacity search on `deployment`, as its figure's row.
pub(super) fn ladder(ctx: &Ctx, deployment: Deployment) -> anyhow::Result<Row> {
    let started = Instant::now();
    let pace = Pace {
        tokens: ctx.scale.capacity_tokens,
        delay_ms: TOKEN_PERIOD.as_millis() as u64,
    };
    let mut passed: Option<(usize, u64)> = None;
    let mut stopped = "every step passed".to_string();
    let mut steps = Vec::new();
    let mut errors = Vec::new();
    for &sessions in &ctx.scale.capacity_steps {
        if started.elapsed() > ctx.scale.capacity_budget {
            stopped = format!("time budget spent before {sessions}");
            break;
        }
        let (apps, database) = deployment.launch(pace)?;
        let (tokens, warmup) = (ctx.scale.capacity_tokens, ctx.scale.warmup_tokens);
        let addresses: Vec<&str> = apps.iter().map(|app| app.address.as_str()).collect();
        let live = ctx
            .client
            .block_on(live::measure_spread(&addresses, sessions, tokens, warmup));
        apps.into_iter().for_each(InProcess::stop);
        drop(database);
        let p99 = live.latency.p99_ns;
        steps.push(json!({"sessions": sessions, "latency": live.latency,
            "failed_sessions": live.problems.len(), "errors": live.errors.len()}));
        errors.extend(
            live.errors
                .iter()
                .map(|e| format!("{sessions} sessions: {e}")),
        );
        let ok = live.errors.is_empty() && live.problems.is_empty() && p99 < P99_BOUND;
        if !ok {
            let why = match live.problems.first().or(live.errors.first()) {
                Some(problem) => format!(
                    "{} sessions failed, e.g. {problem}",
                    live.problems.len() + live.errors.len()
                ),
                None => format!("p99 {} ms", ms(p99)),
            };
            stopped = format!("{sessions} failed: {why}");
            break;
        }
        passed = Some((sessions, p99));
    }
    if !errors.is_empty() {
        anyhow::bail!("capacity ({deployment:?}): {}", errors.join("; "));
    }
    let best = passed.map_or(0, |(n, _)| n);
    let shown = match passed {
        Some((n, p99)) => format!(
            "{} sessions (p99 {} ms); {stopped}",
            thousands(n as u64),
            ms(p99)
        ),
        None => format!("none; {stopped}"),
    };
    let (title, target) = match deployment {
        Deployment::Sqlite => (
            "4. capacity: live sessions at 50 tokens/s, p99 < 10 ms".to_string(),
            Some(TARGET),
        ),
        Deployment::Postgres(1) => (
            "9c. PostgreSQL capacity, 1 instance: live sessions at 50 tokens/s, p99 < 10 ms"
                .to_string(),
            None,
        ),
        Deployment::Postgres(n) => (
            format!(
                "9d. PostgreSQL capacity, {n} instances on one database (sessions spread \
                 over them)"
            ),
            Some(TWO_INSTANCE_TARGET),
        ),
    };
    let row = Row::new(title).tandem(shown);
    let row = match target {
        Some(target) => row.target(
            format!("≥ {}", thousands(target as u64)),
            Verdict::of(best >= target),
        ),
        None => row.target("-".to_string(), Verdict::Info),
    };
    Ok(row.data(json!({"largest_passing": best, "steps": steps,
        "seconds": started.elapsed().as_secs_f64()})))
}
