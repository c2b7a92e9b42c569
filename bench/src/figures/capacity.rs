//! Figure 4, capacity: the most live sessions at 50 tokens/s each that keep p99
//! latency under 10 ms with no lost or duplicated frame. A bounded search over fixed
//! steps on a fresh app each, stopping at the first step that fails or when the time
//! budget is spent. The same search runs on PostgreSQL (figure 9) with one instance and
//! with two sharing the database, the sessions spread over both.
//!
//! Beside each search, the same deployment on the no-op store (a store that writes
//! nothing) is searched from the step where the store's search stopped: the most this
//! machine carries with the load client beside it, whatever a store does. A target above
//! that ceiling is out of this machine's reach, not the store's.

use std::fmt;
use std::time::Instant;

use serde_json::{json, Value};
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
    /// This many instances, each on its own no-op store: the machine's ceiling.
    Noop(usize),
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
            Self::Noop(instances) => {
                let apps = (0..instances)
                    .map(|_| InProcess::on_noop(pace))
                    .collect::<anyhow::Result<Vec<_>>>()?;
                Ok((apps, None))
            }
        }
    }

    /// The same number of instances on the no-op store.
    fn ceiling(self) -> Self {
        match self {
            Self::Sqlite => Self::Noop(1),
            Self::Postgres(instances) | Self::Noop(instances) => Self::Noop(instances),
        }
    }
}

/// Why a search stopped.
enum Stop {
    /// Every step passed.
    Done,
    /// The time budget was spent before this step.
    Budget(usize),
    /// This step failed, for this reason.
    Failed(usize, String),
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Done => write!(f, "every step passed"),
            Self::Budget(before) => write!(f, "time budget spent before {before}"),
            Self::Failed(sessions, why) => write!(f, "{sessions} failed: {why}"),
        }
    }
}

/// What one search over the steps found.
struct Search {
    /// The largest passing step and its p99, in nanoseconds.
    passed: Option<(usize, u64)>,
    stop: Stop,
    steps: Vec<Value>,
    errors: Vec<String>,
}

impl Search {
    /// `"500 sessions (p99 8.4 ms); 1000 failed: p99 61.8 ms"`.
    fn shown(&self) -> String {
        match self.passed {
            Some((n, p99)) => format!(
                "{} sessions (p99 {} ms); {}",
                thousands(n as u64),
                ms(p99),
                self.stop
            ),
            None => format!("none; {}", self.stop),
        }
    }

    fn largest_passing(&self) -> usize {
        self.passed.map_or(0, |(n, _)| n)
    }

    /// The step that failed, if one did.
    fn failed_at(&self) -> Option<usize> {
        match self.stop {
            Stop::Failed(sessions, _) => Some(sessions),
            Stop::Done | Stop::Budget(_) => None,
        }
    }
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let row = ladder(ctx, Deployment::Sqlite)?;
    Ok(vec![row])
}

/// The capacity search on `deployment`, then the no-op store's from where it stopped,
/// as its figure's row.
pub(super) fn ladder(ctx: &Ctx, deployment: Deployment) -> anyhow::Result<Row> {
    let started = Instant::now();
    let found = search(ctx, deployment, &ctx.scale.capacity_steps)?;
    let seconds = started.elapsed().as_secs_f64();
    let from = found.failed_at().unwrap_or(usize::MAX);
    let ceiling_steps: Vec<usize> = ctx
        .scale
        .capacity_steps
        .iter()
        .copied()
        .filter(|&step| step >= from)
        .collect();
    let ceiling = search(ctx, deployment.ceiling(), &ceiling_steps)?;
    let errors: Vec<&str> = found
        .errors
        .iter()
        .chain(&ceiling.errors)
        .map(String::as_str)
        .collect();
    if !errors.is_empty() {
        anyhow::bail!("capacity ({deployment:?}): {}", errors.join("; "));
    }
    let best = found.largest_passing();
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
        Deployment::Postgres(n) | Deployment::Noop(n) => (
            format!(
                "9d. PostgreSQL capacity, {n} instances on one database (sessions spread \
                 over them)"
            ),
            Some(TWO_INSTANCE_TARGET),
        ),
    };
    // The ceiling's search starts at the failed step: nothing below it was tried.
    let baseline = match (found.failed_at(), ceiling.passed) {
        (None, _) => "-".to_string(),
        (Some(_), None) => format!("no-op store: {}", ceiling.stop),
        (Some(_), Some(_)) => format!("no-op store: {}", ceiling.shown()),
    };
    let row = Row::new(title).tandem(found.shown()).baseline(baseline);
    let row = match target {
        Some(target) => row.target(
            format!("≥ {}", thousands(target as u64)),
            Verdict::of(best >= target),
        ),
        None => row.target("-".to_string(), Verdict::Info),
    };
    Ok(
        row.data(json!({"largest_passing": best, "steps": found.steps,
        "seconds": seconds,
        "noop_store": {"largest_passing": ceiling.largest_passing(),
            "steps": ceiling.steps, "stopped": ceiling.stop.to_string()}})),
    )
}

/// Tries `steps` in order on fresh apps until one fails or the time budget is spent.
fn search(ctx: &Ctx, deployment: Deployment, steps: &[usize]) -> anyhow::Result<Search> {
    let started = Instant::now();
    let pace = Pace {
        tokens: ctx.scale.capacity_tokens,
        delay_ms: TOKEN_PERIOD.as_millis() as u64,
    };
    let mut found = Search {
        passed: None,
        stop: Stop::Done,
        steps: Vec::new(),
        errors: Vec::new(),
    };
    for &sessions in steps {
        if started.elapsed() > ctx.scale.capacity_budget {
            found.stop = Stop::Budget(sessions);
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
        found
            .steps
            .push(json!({"sessions": sessions, "latency": live.latency,
            "failed_sessions": live.problems.len(), "errors": live.errors.len()}));
        found.errors.extend(
            live.errors
                .iter()
                .map(|e| format!("{sessions} sessions ({deployment:?}): {e}")),
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
            found.stop = Stop::Failed(sessions, why);
            break;
        }
        found.passed = Some((sessions, p99));
    }
    Ok(found)
}
