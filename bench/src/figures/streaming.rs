//! Figure 1, streaming throughput: frames per second a socket receives while Tandem
//! replays a long backlog from its log, next to a bare tokio-tungstenite server sending
//! the same frame bytes on loopback. Also home of that bare server, which figure 5
//! uses as its baseline too.

use std::sync::Arc;
use std::time::Instant;

use anyhow::bail;
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio_tungstenite::tungstenite::Message;

use super::Ctx;
use crate::client::{self, event_seq, Frame, SeqCheck};
use crate::report::{Row, Verdict};
use crate::seed;
use crate::server::{InProcess, Pace};
use crate::stats::{per_second, thousands};

/// The target: at least this share of the bare server's rate.
const TARGET: f64 = 0.6;

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let events = ctx.scale.backlog;
    let (app, store) = InProcess::on_sqlite(Pace {
        tokens: 1,
        delay_ms: 0,
    })?;
    let session = app.block_on(seed::backlog(&*store, events))?.to_string();
    let frames = app.block_on(frames_after(&*store, &session, 0))?;
    let bare = Bare::start(frames)?;
    let (mut tandem, mut baseline) = (Vec::new(), Vec::new());
    for _ in 0..ctx.scale.stream_reps {
        tandem.push(
            ctx.client
                .block_on(replay(&app.address, &session, 0, events))?,
        );
        baseline.push(
            ctx.client
                .block_on(replay(&bare.address, &session, 0, events))?,
        );
    }
    app.stop();
    let (tandem, baseline) = (median(&mut tandem), median(&mut baseline));
    let ratio = tandem / baseline;
    let row = Row::new(format!(
        "1. streaming: replay of {} events (frames/s)",
        thousands(events as u64)
    ))
    .tandem(per_second(tandem))
    .baseline(format!("{} bare tungstenite", per_second(baseline)))
    .ratio(ratio)
    .target(format!("≥ {TARGET} of bare"), Verdict::of(ratio >= TARGET))
    .data(json!({"events": events, "tandem_fps": tandem, "bare_fps": baseline}));
    Ok(vec![row])
}

/// The frames Tandem sends for a session's events after `after`, byte for byte.
pub async fn frames_after<S: tandem::store::Store>(
    store: &S,
    session: &str,
    after: u64,
) -> anyhow::Result<Vec<String>> {
    let id = tandem::domain::SessionId::parse(session)?;
    let events = store.events_after(id, after, u32::MAX).await?;
    Ok(events
        .iter()
        .map(|e| tandem::store::FramePage::frame(e.seq, &e.json).to_string())
        .collect())
}

/// Connects with `after`, reads to `caught_up` checking every seq; returns frames/s.
pub async fn replay(
    address: &str,
    session: &str,
    after: u64,
    events: usize,
) -> anyhow::Result<f64> {
    let started = Instant::now();
    let mut socket = client::connect(address, session, after).await?;
    let mut check = SeqCheck::after(after);
    loop {
        let text = client::next_text(&mut socket, std::time::Duration::from_secs(60)).await?;
        if let Some(seq) = event_seq(&text) {
            check.take(seq)?;
            continue;
        }
        let frame = Frame::parse(&text)?;
        if frame.kind == "caught_up" && frame.seq == Some(check.last) {
            break;
        }
        bail!("unexpected frame {text:.120}");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let _ = socket.close(None).await;
    let received = (check.last - after) as usize;
    if received != events {
        bail!("received {received} events, expected {events}");
    }
    Ok(events as f64 / elapsed)
}

/// The median of a few rates.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// A bare tokio-tungstenite server: whatever the path, it sends `frames`, then
/// `caught_up`, then waits for the client to close. Its own runtime, like the app's.
pub struct Bare {
    pub address: String,
    _runtime: Runtime,
}

impl Bare {
    pub fn start(frames: Vec<String>) -> anyhow::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("bare-ws")
            .build()?;
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0"))?;
        let address = listener.local_addr()?.to_string();
        let frames = Arc::new(frames);
        runtime.spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                tokio::spawn(serve(tcp, frames.clone()));
            }
        });
        Ok(Self {
            address,
            _runtime: runtime,
        })
    }
}

async fn serve(tcp: tokio::net::TcpStream, frames: Arc<Vec<String>>) -> anyhow::Result<()> {
    let _ = tcp.set_nodelay(true);
    let mut socket = tokio_tungstenite::accept_async(tcp).await?;
    let last = frames.last().and_then(|f| event_seq(f)).unwrap_or(0);
    // Queue every frame and flush once: tungstenite writes whenever its buffer fills.
    for frame in frames.iter() {
        socket.feed(Message::text(frame.clone())).await?;
    }
    let caught_up = json!({"kind": "caught_up", "seq": last}).to_string();
    socket.send(Message::text(caught_up)).await?;
    while let Some(Ok(_)) = socket.next().await {}
    Ok(())
}
