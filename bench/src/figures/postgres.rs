//! Figure 9, the PostgreSQL backend, each next to a baseline measured in the same run on a
//! fresh database of the same server:
//! - persistence: events per second Tandem's writer commits while many sessions append
//!   one token at a time, next to plain batched `INSERT … SELECT FROM UNNEST` of the
//!   same rows into a bare table;
//! - token latency for 100 live sessions at 50 tokens/s, next to the no-op store, and
//!   again without the WAL flush, next to the flush's own time;
//! - capacity ([`super::capacity`]) with one instance and with two on one database;
//! - bursts ([`super::burst`]), next to the no-op store.

use std::sync::Arc;
use std::time::{Duration, Instant};

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
use crate::stats::{ms, per_second, Summary};

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
    rows.extend(latency(ctx)?);
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

/// Figure 9a by alternating pairs: Tandem's store, then plain inserts, each for the
/// scale's time, on one database whose tables both grow from pair to pair. One pair could
/// not tell 0.6 from 0.7 (five runs of one pair each on one machine read 0.66 to 0.89:
/// a checkpoint falls on either side), so the row shows the pair with the median ratio
/// and the range beside it ([`super::pairs`]); `COPY` is measured once after the pairs,
/// for the record.
fn persistence(ctx: &Ctx, url: &str) -> anyhow::Result<Row> {
    let (sessions, time) = (ctx.scale.persist_sessions, ctx.scale.persist_time);
    let count = ctx.scale.persist_pairs.max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (mut pairs, copy) = runtime.block_on(async {
        let store =
            Arc::new(PostgresStore::connect(url, &crate::server::postgres_options()).await?);
        let mut plain = BareTable::create(url, "plain_events", sessions).await?;
        let mut pairs = Vec::with_capacity(count);
        for _ in 0..count {
            let tandem = store_rate(store.clone(), sessions, time).await?;
            pairs.push((tandem, plain.insert_rate(time).await?));
        }
        let copy = BareTable::create(url, "copy_events", sessions)
            .await?
            .copy_rate(time)
            .await?;
        anyhow::Ok((pairs, copy))
    })?;
    let (median, spread) =
        super::pairs::sort_to_median(&mut pairs, |&(tandem, plain)| tandem / plain);
    let (tandem, plain) = pairs[median];
    let ratio = tandem / plain;
    Ok(Row::new(format!(
        "9a. PostgreSQL persistence: {sessions} sessions appending (events/s)"
    ))
    .tandem(format!("{}{spread}", per_second(tandem)))
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
            "tandem_eps": tandem, "plain_eps": plain, "copy_eps": copy,
            "pairs": pairs.iter().map(|&(tandem, plain)| json!({
                "tandem_eps": tandem, "plain_eps": plain, "ratio": tandem / plain,
            })).collect::<Vec<_>>()})))
}

/// A table shaped like Tandem's events (no more) on a connection of its own, the
/// sessions whose rows go in, and the last seq they have.
struct BareTable {
    conn: PgConnection,
    table: &'static str,
    ids: Vec<String>,
    seq: i64,
}

impl BareTable {
    async fn create(url: &str, table: &'static str, sessions: usize) -> anyhow::Result<Self> {
        let mut conn = PgConnection::connect(url).await?;
        let create = format!(
            "CREATE TABLE {table} (session_id TEXT NOT NULL, seq BIGINT NOT NULL, \
             event TEXT NOT NULL, PRIMARY KEY (session_id, seq))"
        );
        sqlx::query(&create).execute(&mut conn).await?;
        let ids = (0..sessions)
            .map(|_| SessionId::generate().to_string())
            .collect();
        Ok(Self {
            conn,
            table,
            ids,
            seq: 0,
        })
    }

    /// Plain batched inserts of the rows Tandem's store gets, for `time`: one transaction
    /// per round, one row per session, three array parameters. Rows per second.
    async fn insert_rate(&mut self, time: Duration) -> anyhow::Result<f64> {
        let insert = format!(
            "INSERT INTO {} (session_id, seq, event) \
             SELECT * FROM UNNEST($1::text[], $2::bigint[], $3::text[])",
            self.table
        );
        let started = Instant::now();
        let mut inserted = 0u64;
        while started.elapsed() < time {
            self.seq += 1;
            let events: Vec<String> = (0..self.ids.len())
                .map(|_| token(self.seq as u64).json)
                .collect();
            let seqs = vec![self.seq; self.ids.len()];
            let mut tx = self.conn.begin().await?;
            sqlx::query(&insert)
                .bind(&self.ids)
                .bind(&seqs)
                .bind(&events)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            inserted += self.ids.len() as u64;
        }
        Ok(inserted as f64 / started.elapsed().as_secs_f64())
    }

    /// The same rows by `COPY … FROM STDIN` (text format), one COPY per transaction: the
    /// other way to insert many rows at once, measured to choose between the two.
    async fn copy_rate(&mut self, time: Duration) -> anyhow::Result<f64> {
        let statement = format!("COPY {} (session_id, seq, event) FROM STDIN", self.table);
        let started = Instant::now();
        let mut inserted = 0u64;
        while started.elapsed() < time {
            self.seq += 1;
            let seq = self.seq;
            let mut data = String::with_capacity(self.ids.len() * 160);
            for id in &self.ids {
                // Text format: tab-separated; a backslash in the JSON is doubled.
                let event = token(seq as u64).json.replace('\\', "\\\\");
                data.push_str(&format!("{id}\t{seq}\t{event}\n"));
            }
            let mut tx = self.conn.begin().await?;
            let mut copy = tx.copy_in_raw(&statement).await?;
            copy.send(data.into_bytes()).await?;
            copy.finish().await?;
            tx.commit().await?;
            inserted += self.ids.len() as u64;
        }
        Ok(inserted as f64 / started.elapsed().as_secs_f64())
    }
}

/// Figure 9b, and beside it what PostgreSQL's WAL flush costs on this server (9f): the
/// same live sessions on a database whose commits do not wait for the flush
/// (`synchronous_commit = off` for that database only), next to durable one-row commits
/// one at a time (the flush's own time, the least any durable append takes here).
fn latency(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let sessions = LATENCY_SESSIONS.min(*ctx.scale.latency_sessions.last().unwrap_or(&1));
    let (tokens, warmup) = (ctx.scale.latency_tokens, ctx.scale.warmup_tokens);
    let pace = Pace {
        tokens,
        delay_ms: TOKEN_PERIOD.as_millis() as u64,
    };
    // The live sessions on `app`, which stops after them.
    let live_on = |app: InProcess| {
        let live = ctx
            .client
            .block_on(live::measure(&app.address, sessions, tokens, warmup));
        app.stop();
        live
    };
    let durable = ScratchDatabase::create().map_err(anyhow::Error::msg)?;
    let tandem = live_on(InProcess::on_postgres(pace, durable.url())?.0);
    let commits = ctx
        .client
        .block_on(one_row_commits(durable.url(), tokens as usize * 5))?;
    drop(durable);
    let baseline = live_on(InProcess::on_noop(pace)?);
    let unflushed_database = ScratchDatabase::create().map_err(anyhow::Error::msg)?;
    ctx.client.block_on(async {
        let mut conn = PgConnection::connect(unflushed_database.url()).await?;
        let statement = format!(
            "ALTER DATABASE \"{}\" SET synchronous_commit = off",
            unflushed_database.name()
        );
        sqlx::query(&statement).execute(&mut conn).await?;
        anyhow::Ok(())
    })?;
    let unflushed = live_on(InProcess::on_postgres(pace, unflushed_database.url())?.0);
    drop(unflushed_database);
    let errors = [&tandem, &baseline, &unflushed].map(|live| &live.errors);
    if let Some(error) = errors.into_iter().flatten().next() {
        anyhow::bail!("PostgreSQL token latency: {error}");
    }
    let (t, b, u) = (&tandem.latency, &baseline.latency, &unflushed.latency);
    let problems = tandem.problems.len() + baseline.problems.len() + unflushed.problems.len();
    Ok(vec![
        Row::new(format!(
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
                "p999_ms": ms(t.p999_ns), "noop_p99_ms": ms(b.p99_ns), "problems": problems}),
        ),
        Row::new("9f. 9b without the WAL flush (synchronous_commit = off for its database)")
            .tandem(u.display_ms())
            .baseline(format!(
                "{} a durable one-row commit, one at a time (the flush and a round trip)",
                commits.display_ms()
            ))
            .data(
                json!({"sessions": sessions, "p50_ms": ms(u.p50_ns), "p99_ms": ms(u.p99_ns),
                    "p999_ms": ms(u.p999_ns), "commits": commits.count,
                    "commit_p50_ms": ms(commits.p50_ns), "commit_p99_ms": ms(commits.p99_ns),
                    "commit_p999_ms": ms(commits.p999_ns)}),
            ),
    ])
}

/// The time of each of `count` durable commits of one row into a bare table of `url`'s
/// database, one after the other: PostgreSQL's WAL flush and a round trip, nothing else.
async fn one_row_commits(url: &str, count: usize) -> anyhow::Result<Summary> {
    let mut table = BareTable::create(url, "one_row_commits", 1).await?;
    let insert = "INSERT INTO one_row_commits (session_id, seq, event) VALUES ($1, $2, $3)";
    let mut samples = Vec::with_capacity(count);
    for seq in 1..=count as i64 {
        let event = token(seq as u64).json;
        let started = Instant::now();
        sqlx::query(insert)
            .bind(&table.ids[0])
            .bind(seq)
            .bind(&event)
            .execute(&mut table.conn)
            .await?;
        samples.push(started.elapsed().as_nanos() as u64);
    }
    Ok(Summary::of(&mut samples))
}
