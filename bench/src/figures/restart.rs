//! Figure 6, restart: the real binary started on a database holding many paused
//! sessions; time from spawning the process until `/healthz` answers, until one of the
//! questions is answered (202), and until every session is listed. The answered run is
//! then followed to its end over a socket, every seq checked.

use std::time::Duration;

use anyhow::{bail, ensure};
use serde_json::json;
use tandem::store::{SqliteStore, StoreOptions};

use super::Ctx;
use crate::child::{tandem_binary, Tandem};
use crate::client::{self, Frame, Rest, SeqCheck};
use crate::report::{Row, Verdict};
use crate::seed;
use crate::stats::thousands;

/// The target: answerable within a second of the start.
const TARGET: Duration = Duration::from_secs(1);
/// Events of a seeded paused run (see `seed::paused`).
const PAUSED_RUN_EVENTS: u64 = 10;

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let count = ctx.scale.restart_paused;
    let binary = tandem_binary()?;
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("tandem.db").display());
    let paused = ctx.client.block_on(async {
        let store = SqliteStore::connect(&url, &StoreOptions::default()).await?;
        let paused = seed::paused(&store, count).await?;
        store.close().await;
        anyhow::Ok(paused)
    })?;
    let (session, interrupt) = paused.last().expect("at least one paused session").clone();
    let session = session.to_string();
    let extra = ["--bench-tokens", "5", "--token-delay-ms", "0"];
    let mut tandem = Tandem::spawn(&binary, &url, &extra)?;
    let rest = Rest::new(&tandem.address);
    let times = ctx.client.block_on(async {
        let healthy = tandem.wait_healthy(&rest.http).await?;
        let path = format!("/api/sessions/{session}/interrupts/{interrupt}");
        let answer = json!({"status": "resolved", "payload": {"text": "Ada"}});
        rest.post(&path, answer).await?;
        let answered = tandem.started.elapsed();
        let listed_count = rest.get("/api/sessions").await?["sessions"]
            .as_array()
            .map_or(0, Vec::len);
        let listed = tandem.started.elapsed();
        ensure!(
            listed_count == count,
            "listed {listed_count} sessions, expected {count}"
        );
        follow_resumed_run(&tandem.address, &session).await?;
        anyhow::Ok((healthy, answered, listed))
    })?;
    let (healthy, answered, listed) = times;
    let shown = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1e3);
    let row = Row::new(format!(
        "6. restart with {} paused sessions: answered / healthz / all listed",
        thousands(count as u64)
    ))
    .tandem(format!(
        "{} / {} / {}",
        shown(answered),
        shown(healthy),
        shown(listed)
    ))
    .target("answerable < 1 s", Verdict::of(answered < TARGET))
    .data(
        json!({"paused": count, "healthz_ms": healthy.as_secs_f64() * 1e3,
        "answered_ms": answered.as_secs_f64() * 1e3, "listed_ms": listed.as_secs_f64() * 1e3}),
    );
    Ok(vec![row])
}

/// Reads the answered session from its paused run's end to the resumed run's end.
async fn follow_resumed_run(address: &str, session: &str) -> anyhow::Result<()> {
    let mut socket = client::connect(address, session, PAUSED_RUN_EVENTS).await?;
    let mut check = SeqCheck::after(PAUSED_RUN_EVENTS);
    loop {
        let text = client::next_text(&mut socket, Duration::from_secs(30)).await?;
        let frame = Frame::parse(&text)?;
        match (frame.kind.as_ref(), frame.seq) {
            ("event", Some(seq)) => {
                check.take(seq)?;
                if frame.ends_run() {
                    return Ok(());
                }
            }
            ("caught_up", _) => {}
            _ => bail!("unexpected frame {text:.120}"),
        }
    }
}
