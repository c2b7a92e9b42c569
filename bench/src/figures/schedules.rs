//! Figure 19, schedules: 10,000 schedules due in the same second on two instances of one
//! PostgreSQL database. How fast they fire (fires per second, from the due second to the
//! last fire) and how late each fire is after its scheduled time (p50 / p99: the fire's
//! `firedAt`, taken as its message goes to the log), next to 10,000 plain session
//! creations with a first message on the same two instances (sessions per second). Every
//! time must fire exactly once: a time recorded twice, skipped or missed fails the figure.

use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt, TryStreamExt};
use serde_json::json;
use tandem::store::ScratchDatabase;

use super::Ctx;
use crate::client::Rest;
use crate::report::Row;
use crate::server::{InProcess, Pace};
use crate::stats::Summary;

/// Schedules due in the one second.
const SCHEDULES: usize = 10_000;
/// Requests in flight at once in the baseline.
const CONCURRENT: usize = 64;
/// How long the fires may take before the figure fails.
const FIRE_LIMIT: Duration = Duration::from_secs(300);

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let count = if ctx.smoke { 200 } else { SCHEDULES };
    let database = ScratchDatabase::create().map_err(anyhow::Error::msg)?;
    let url = database.url().to_string();
    // One token per run: the figure is the scheduler's, not the runs'.
    let pace = Pace {
        tokens: 1,
        delay_ms: 0,
    };
    let (a, _) = InProcess::on_postgres(pace, &url)?;
    let (b, _) = InProcess::on_postgres(pace, &url)?;
    let measured = ctx.client.block_on(async {
        let pool = sqlx::PgPool::connect(&url).await?;
        let fired = fire_all(&pool, &a.address, count).await;
        let baseline = create_sessions(&a.address, &b.address, count).await;
        pool.close().await;
        anyhow::Ok((fired?, baseline?))
    });
    a.stop();
    b.stop();
    let ((mut delays, fire_seconds), session_seconds) = measured?;
    let late = Summary::of(&mut delays);
    let fires_per_second = count as f64 / fire_seconds.max(0.001);
    let sessions_per_second = count as f64 / session_seconds.max(0.001);
    Ok(vec![Row::new(format!(
        "19. {count} schedules due in one second, two instances on PostgreSQL: fires/s \
         (delay after the scheduled time p50 / p99)"
    ))
    .tandem(format!(
        "{fires_per_second:.0} fires/s ({} / {} ms late)",
        late.p50_ns / 1_000_000,
        late.p99_ns / 1_000_000
    ))
    .baseline(format!(
        "{sessions_per_second:.0} sessions/s: {count} sessions made with a first message over REST"
    ))
    .ratio(fires_per_second / sessions_per_second.max(0.001))
    .data(
        json!({"schedules": count, "firesPerSecond": fires_per_second,
                 "sessionsPerSecond": sessions_per_second, "late": late}),
    )])
}

/// Makes `count` schedules due in the same second (one through the API, whose change wakes
/// both schedulers, the rest straight into the database), waits until every one
/// fired, and returns each fire's delay after its time (ns) and the seconds from the due
/// time to the last fire.
async fn fire_all(
    pool: &sqlx::PgPool,
    address: &str,
    count: usize,
) -> anyhow::Result<(Vec<u64>, f64)> {
    let now = chrono::Utc::now().timestamp_millis();
    // A whole second a little ahead: long enough to write the rows first.
    let due = (now / 1_000 + 3) * 1_000;
    let at = chrono::DateTime::from_timestamp_millis(due)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    // One through the API first (its change wakes both schedulers, which then sleep until
    // the due second), then the rest straight into the table (a person may make only 200).
    Rest::new(address)
        .post(
            "/api/schedules",
            json!({"name": "s", "message": {"text": "go"}, "at": at}),
        )
        .await?;
    let spec = json!({"name": "s", "message": {"text": "go"}, "at": at, "enabled": true,
                      "misfire": "once", "misfireWindowSeconds": 3600, "overlap": "skip"});
    sqlx::query(
        "INSERT INTO schedules (id, owner_id, name, spec, enabled, next_fire_at, version, \
           created_at, updated_at) \
         SELECT 'bench-' || n, '00000000-0000-0000-0000-000000000000', 's', $1, TRUE, $2, 1, \
           $3, $3 FROM generate_series(1, $4) AS n",
    )
    .bind(spec.to_string())
    .bind(due)
    .bind(now)
    .bind((count - 1) as i64)
    .execute(pool)
    .await?;
    if chrono::Utc::now().timestamp_millis() >= due {
        anyhow::bail!("writing the schedules took past their due second");
    }
    let started = Instant::now();
    loop {
        let (recorded,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM schedule_fires")
            .fetch_one(pool)
            .await?;
        if recorded as usize >= count {
            break;
        }
        if started.elapsed() > FIRE_LIMIT {
            anyhow::bail!("{recorded} of {count} schedules fired in {FIRE_LIMIT:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let rows: Vec<(String, i64, i64, Option<String>)> = sqlx::query_as(
        "SELECT status, scheduled_for, coalesce(fired_at, 0), session_id FROM schedule_fires",
    )
    .fetch_all(pool)
    .await?;
    let sessions: std::collections::HashSet<_> = rows.iter().map(|row| row.3.clone()).collect();
    if rows.len() != count || sessions.len() != count {
        anyhow::bail!(
            "{} fires in {} sessions for {count} times: a time fired twice",
            rows.len(),
            sessions.len()
        );
    }
    if let Some(row) = rows.iter().find(|row| row.0 != "fired") {
        anyhow::bail!("a due time was {} rather than fired", row.0);
    }
    let last = rows.iter().map(|row| row.2).max().unwrap_or(due);
    let delays = rows
        .iter()
        .map(|row| (row.2 - row.1).max(0) as u64 * 1_000_000)
        .collect();
    Ok((delays, (last - due).max(1) as f64 / 1_000.0))
}

/// Makes `count` sessions with a first message, half on each instance, `CONCURRENT` at
/// once; the seconds it took.
async fn create_sessions(a: &str, b: &str, count: usize) -> anyhow::Result<f64> {
    let (on_a, on_b) = (Rest::new(a), Rest::new(b));
    let started = Instant::now();
    stream::iter(0..count)
        .map(|n| {
            let rest = if n % 2 == 0 { &on_a } else { &on_b };
            async move {
                let session = rest.create_session().await?;
                let path = format!("/api/sessions/{session}/messages");
                rest.post(&path, json!({"text": "go"})).await?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(CONCURRENT)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(started.elapsed().as_secs_f64())
}
