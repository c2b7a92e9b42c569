//! Figure 3, persistence throughput: events per second Tandem's group-commit writer
//! commits while many sessions append one token at a time (each waiting for its commit,
//! as a run does), next to plain batched multi-row INSERTs into a fresh SQLite file with
//! sqlx, same pragmas (WAL, synchronous=NORMAL, the writer's 64 MiB page cache), same rows.

use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use shared::{Event, EventBody};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{Connection, QueryBuilder, Sqlite, SqliteConnection};
use tandem::domain::{now_ms, SessionId, UserId};
use tandem::eventlog::{Hub, Writer};
use tandem::store::{Command, Guard, LogEntry, SqliteStore, Store, StoreOptions};

use super::Ctx;
use crate::report::{Row, Verdict};
use crate::stats::per_second;

/// The target: at least this share of plain batched inserts.
const TARGET: f64 = 0.5;
/// Rows per INSERT statement in the baseline (as Tandem's store uses).
const ROWS_PER_INSERT: usize = 500;

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let (sessions, time) = (ctx.scale.persist_sessions, ctx.scale.persist_time);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let dir = tempfile::tempdir()?;
    let tandem = runtime.block_on(writer_rate(&dir, sessions, time))?;
    let plain = runtime.block_on(plain_rate(&dir, sessions, time))?;
    let ratio = tandem / plain;
    let row = Row::new(format!(
        "3. persistence: {sessions} sessions appending (events/s)"
    ))
    .tandem(per_second(tandem))
    .baseline(format!(
        "{} plain INSERTs ({sessions} rows/txn)",
        per_second(plain)
    ))
    .ratio(ratio)
    .target(format!("≥ {TARGET} of plain"), Verdict::of(ratio >= TARGET))
    .data(json!({"sessions": sessions, "seconds": time.as_secs_f64(),
            "tandem_eps": tandem, "plain_eps": plain}));
    Ok(vec![row])
}

/// A token event as a run records it.
pub(super) fn token(i: u64) -> LogEntry {
    let body = EventBody::TextMessageContent {
        message_id: "msg_0123456789abcdef0123456789abcdef".into(),
        delta: format!(" word{i}"),
    };
    LogEntry::new(Event::at(body, now_ms()))
}

async fn writer_rate(
    dir: &tempfile::TempDir,
    sessions: usize,
    time: Duration,
) -> anyhow::Result<f64> {
    let url = format!("sqlite://{}", dir.path().join("tandem.db").display());
    let store = Arc::new(SqliteStore::connect(&url, &StoreOptions::default()).await?);
    store_rate(store, sessions, time).await
}

/// Events per second Tandem's writer commits on `store` while `sessions` producers
/// append one token at a time, each waiting for its commit.
pub(super) async fn store_rate<S: Store>(
    store: Arc<S>,
    sessions: usize,
    time: Duration,
) -> anyhow::Result<f64> {
    let writer = Writer::spawn(store.clone(), Hub::default(), Duration::from_secs(30));
    let committed = Arc::new(AtomicU64::new(0));
    let mut ids = Vec::with_capacity(sessions);
    for _ in 0..sessions {
        let id = SessionId::generate();
        store
            .create_session(UserId::LOCAL, id, None, now_ms())
            .await?;
        ids.push(id);
    }
    let started = Instant::now();
    let mut producers = Vec::new();
    for id in ids {
        let (writer, committed) = (writer.clone(), committed.clone());
        producers.push(tokio::spawn(async move {
            let mut i = 0;
            while started.elapsed() < time {
                let entries = vec![token(i)];
                let command = Command {
                    session: id,
                    guard: Guard::Append,
                    entries,
                    state: None,
                };
                writer.submit(command).await?;
                committed.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
            anyhow::Ok(())
        }));
    }
    for producer in producers {
        producer.await??;
    }
    Ok(committed.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}

async fn plain_rate(
    dir: &tempfile::TempDir,
    sessions: usize,
    time: Duration,
) -> anyhow::Result<f64> {
    let url = format!("sqlite://{}", dir.path().join("plain.db").display());
    let options = SqliteConnectOptions::from_str(&url)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .pragma("cache_size", "-65536");
    let mut conn = SqliteConnection::connect_with(&options).await?;
    sqlx::query(
        "CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, \
         event TEXT NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID",
    )
    .execute(&mut conn)
    .await?;
    let ids: Vec<String> = (0..sessions)
        .map(|_| SessionId::generate().to_string())
        .collect();
    let started = Instant::now();
    let (mut seq, mut inserted) = (0i64, 0u64);
    while started.elapsed() < time {
        seq += 1;
        let rows: Vec<(&str, String)> = ids
            .iter()
            .map(|id| (id.as_str(), token(seq as u64).json))
            .collect();
        let mut tx = conn.begin().await?;
        for chunk in rows.chunks(ROWS_PER_INSERT) {
            let mut insert =
                QueryBuilder::<Sqlite>::new("INSERT INTO events (session_id, seq, event) ");
            insert.push_values(chunk, |mut row, (id, json)| {
                row.push_bind(*id).push_bind(seq).push_bind(json.as_str());
            });
            insert.build().execute(&mut *tx).await?;
        }
        tx.commit().await?;
        inserted += rows.len() as u64;
    }
    Ok(inserted as f64 / started.elapsed().as_secs_f64())
}
