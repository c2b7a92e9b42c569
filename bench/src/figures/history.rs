//! Figure 12, long sessions: the set-up of one model call (reading the session's log and
//! folding it into the conversation) for sessions of 1,000, 10,000 and 100,000 events,
//! the whole log (what every call did before) next to the incremental fold a run keeps
//! (only the events appended since its previous call, here the last 10).

use std::time::{Duration, Instant};

use serde_json::json;
use shared::Event;
use tandem::agent::conversation::{Folded, History};
use tandem::domain::SessionId;
use tandem::store::{EventLog, SqliteStore, StoreOptions};

use super::Ctx;
use crate::report::Row;
use crate::seed;
use crate::stats::{ms, thousands};

/// Events appended between two model calls of the measured run.
const NEW_EVENTS: u64 = 10;
/// Timed repetitions; the median is shown.
const REPS: usize = 5;

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("history.db").display());
    ctx.client.block_on(async {
        let store = SqliteStore::connect(&url, &StoreOptions::default()).await?;
        let mut rows = Vec::new();
        for &events in &ctx.scale.history_events {
            let session = seed::backlog(&store, events).await?;
            rows.push(measure(&store, session, events as u64).await?);
        }
        Ok(rows)
    })
}

async fn measure(store: &SqliteStore, session: SessionId, events: u64) -> anyhow::Result<Row> {
    let mut whole = Vec::new();
    for _ in 0..REPS {
        let started = Instant::now();
        let history = whole_log(store, session).await?;
        whole.push(started.elapsed());
        std::hint::black_box(history);
    }
    let mut earlier = Folded::default();
    fold_after(store, session, &mut earlier, events - NEW_EVENTS).await?;
    let mut incremental = Vec::new();
    for _ in 0..REPS {
        let mut folded = earlier.clone();
        let started = Instant::now();
        fold_after(store, session, &mut folded, events).await?;
        let history = folded.history();
        incremental.push(started.elapsed());
        anyhow::ensure!(
            history == whole_log(store, session).await?,
            "the incremental fold differs from the whole log's"
        );
    }
    let (whole, incremental) = (median(whole), median(incremental));
    let nanos = |d: Duration| d.as_nanos() as u64;
    Ok(Row::new(format!(
        "12. model-call set-up, {}-event session (whole log → incremental)",
        thousands(events)
    ))
    .tandem(format!("{} ms incremental", ms(nanos(incremental))))
    .baseline(format!("{} ms whole log", ms(nanos(whole))))
    .ratio(incremental.as_secs_f64() / whole.as_secs_f64().max(1e-9))
    .data(json!({"events": events, "new_events": NEW_EVENTS,
        "whole_ms": ms(nanos(whole)), "incremental_ms": ms(nanos(incremental))})))
}

/// What every model call did before: read and fold the whole log.
async fn whole_log(store: &SqliteStore, session: SessionId) -> anyhow::Result<History> {
    let mut folded = Folded::default();
    for row in store.events_after(session, 0, u32::MAX).await? {
        let event: Option<Event> = serde_json::from_str(&row.json).ok();
        folded.observe(row.seq, event.as_ref());
    }
    Ok(folded.history())
}

/// Folds in the events after `folded`'s last seq, up to `until`.
async fn fold_after(
    store: &SqliteStore,
    session: SessionId,
    folded: &mut Folded,
    until: u64,
) -> anyhow::Result<()> {
    let limit = u32::try_from(until - folded.last_seq())?;
    for row in store
        .events_after(session, folded.last_seq(), limit)
        .await?
    {
        let event: Option<Event> = serde_json::from_str(&row.json).ok();
        folded.observe(row.seq, event.as_ref());
    }
    Ok(())
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}
