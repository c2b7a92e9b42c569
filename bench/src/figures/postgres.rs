//! Figure 9, the PostgreSQL backend, each next to a baseline measured in the same run on a
//! fresh database of the same server:
//! - persistence: events per second Tandem's writer commits while many sessions append
//!   one token at a time, next to plain batched `INSERT … SELECT FROM UNNEST` of the
//!   same rows into a bare table;
//! - token latency for 100 live sessions at 50 tokens/s, next to the no-op store;
//! - capacity ([`super::capacity`]) with one instance and with two on one database;
//! - bursts ([`super::burst`]), next to the no-op store.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use sqlx::{Connection, PgConnection};
use tandem::domain::SessionId;
use tandem::store::{PostgresStore, ScratchDatabase};

use super::capacity::{self, Deployment};
use super::live::{self, TOKEN_PERIOD};
use super::persistence::{store_rate, token};
use super::Ctx;
use crate::report::{Row, Verdict};
use crate::server::{InProcess, Pace};
use crate::stats::{ms, per_second};

/// The aim: persistence at least this share of plain inserts.
const PERSISTENCE_TARGET: f64 = 0.7;
/// Live sessions of the latency row.
const LATENCY_SESSIONS: usize = 100;
/// The aim for the latency row's p99, in nanoseconds.
const LATENCY_P99_TARGET: u64 = 2_000_000;

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let database = ScratchDatabase::create().map_err(anyhow::Error::msg)?;
    let mut rows = vec![persistence(ctx, database.url())?];
    drop(database);
    rows.push(latency(ctx)?);
    Ok(rows)
}

/// Capacity with one instance and with two on one database (`--only postgres-capacity`).
pub fn capacity_rows(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    Ok(vec![
        capacity::ladder(ctx, Deployment::Postgres(1))?,
        capacity::ladder(ctx, Deployment::Postgres(2))?,
    ])
}

/// Bursts next to the no-op store (`--only postgres-burst`).
pub fn burst_rows(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    super::burst::rows(ctx, true)
}

fn persistence(ctx: &Ctx, url: &str) -> anyhow::Result<Row> {
    let (sessions, time) = (ctx.scale.persist_sessions, ctx.scale.persist_time);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let tandem = runtime.block_on(async {
        let store = PostgresStore::connect(url, &crate::server::postgres_options()).await?;
        store_rate(Arc::new(store), sessions, time).await
    })?;
    let plain = runtime.block_on(plain_rate(url, sessions, time))?;
    let copy = runtime.block_on(copy_rate(url, sessions, time))?;
    let ratio = tandem / plain;
    Ok(Row::new(format!(
        "9a. PostgreSQL persistence: {sessions} sessions appending (events/s)"
    ))
    .tandem(per_second(tandem))
    .baseline(format!(
        "{} plain UNNEST INSERTs ({sessions} rows/txn; COPY: {})",
        per_second(plain),
        per_second(copy)
    ))
    .ratio(ratio)
    .target(
        format!("≥ {PERSISTENCE_TARGET} of plain"),
        Verdict::of(ratio >= PERSISTENCE_TARGET),
    )
    .data(json!({"sessions": sessions, "seconds": time.as_secs_f64(),
            "tandem_eps": tandem, "plain_eps": plain, "copy_eps": copy})))
}

/// A connection, a new table shaped like Tandem's events (no more), and session ids.
async fn bare_table(
    url: &str,
    table: &str,
    sessions: usize,
) -> anyhow::Result<(PgConnection, Vec<String>)> {
    let mut conn = PgConnection::connect(url).await?;
    let create = format!(
        "CREATE TABLE {table} (session_id TEXT NOT NULL, seq BIGINT NOT NULL, \
         event TEXT NOT NULL, PRIMARY KEY (session_id, seq))"
    );
    sqlx::query(&create).execute(&mut conn).await?;
    let ids = (0..sessions)
        .map(|_| SessionId::generate().to_string())
        .collect();
    Ok((conn, ids))
}

/// Plain batched inserts of the same rows into a bare table of the same server: one
/// transaction per round, one row per session, three array parameters.
async fn plain_rate(url: &str, sessions: usize, time: std::time::Duration) -> anyhow::Result<f64> {
    let (mut conn, ids) = bare_table(url, "plain_events", sessions).await?;
    let started = Instant::now();
    let (mut seq, mut inserted) = (0i64, 0u64);
    while started.elapsed() < time {
        seq += 1;
        let events: Vec<String> = (0..sessions).map(|_| token(seq as u64).json).collect();
        let seqs = vec![seq; sessions];
        let mut tx = conn.begin().await?;
        sqlx::query(
            "INSERT INTO plain_events (session_id, seq, event) \
             SELECT * FROM UNNEST($1::text[], $2::bigint[], $3::text[])",
        )
        .bind(&ids)
        .bind(&seqs)
        .bind(&events)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        inserted += sessions as u64;
    }
    Ok(inserted as f64 / started.elapsed().as_secs_f64())
}

/// The same rows by `COPY … FROM STDIN` (text format), one COPY per transaction: the
/// other way to insert many rows at once, measured to choose between the two.
async fn copy_rate(url: &str, sessions: usize, time: std::time::Duration) -> anyhow::Result<f64> {
    let (mut conn, ids) = bare_table(url, "copy_events", sessions).await?;
    let started = Instant::now();
    let (mut seq, mut inserted) = (0i64, 0u64);
    while started.elapsed() < time {
        seq += 1;
        let mut data = String::with_capacity(sessions * 160);
        for id in &ids {
            // Text format: tab-separated; a backslash in the JSON is doubled.
            let event = token(seq as u64).json.replace('\\', "\\\\");
            data.push_str(&format!("{id}\t{seq}\t{event}\n"));
        }
        let mut tx = conn.begin().await?;
        let mut copy = tx
            .copy_in_raw("COPY copy_events (session_id, seq, event) FROM STDIN")
            .await?;
        copy.send(data.into_bytes()).await?;
        copy.finish().await?;
        tx.commit().await?;
        inserted += sessions as u64;
    }
    Ok(inserted as f64 / started.elapsed().as_secs_f64())
}

fn latency(ctx: &Ctx) -> anyhow::Result<Row> {
    let sessions = LATENCY_SESSIONS.min(*ctx.scale.latency_sessions.last().unwrap_or(&1));
    let (tokens, warmup) = (ctx.scale.latency_tokens, ctx.scale.warmup_tokens);
    let pace = Pace {
        tokens,
        delay_ms: TOKEN_PERIOD.as_millis() as u64,
    };
    let database = ScratchDatabase::create().map_err(anyhow::Error::msg)?;
    let (app, _store) = InProcess::on_postgres(pace, database.url())?;
    let tandem = ctx
        .client
        .block_on(live::measure(&app.address, sessions, tokens, warmup));
    app.stop();
    let app = InProcess::on_noop(pace)?;
    let baseline = ctx
        .client
        .block_on(live::measure(&app.address, sessions, tokens, warmup));
    app.stop();
    if let Some(error) = tandem.errors.iter().chain(&baseline.errors).next() {
        anyhow::bail!("PostgreSQL token latency: {error}");
    }
    let (t, b) = (&tandem.latency, &baseline.latency);
    Ok(Row::new(format!(
        "9b. PostgreSQL token latency, {sessions} live sessions at 50 tok/s (p50 / p99 / p99.9)"
    ))
    .tandem(t.display_ms())
    .baseline(format!("{} on the no-op store", b.display_ms()))
    .ratio(t.p99_ns as f64 / b.p99_ns.max(1) as f64)
    .target(
        format!("p99 ≤ {} ms", ms(LATENCY_P99_TARGET)),
        Verdict::of(t.p99_ns <= LATENCY_P99_TARGET),
    )
    .data(
        json!({"sessions": sessions, "p50_ms": ms(t.p50_ns), "p99_ms": ms(t.p99_ns),
            "p999_ms": ms(t.p999_ns), "noop_p99_ms": ms(b.p99_ns),
            "problems": tandem.problems.len() + baseline.problems.len()}),
    ))
}
