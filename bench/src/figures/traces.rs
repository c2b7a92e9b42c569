//! Figure 18, what exporting traces costs the token path: token latency (engine yield →
//! client receive) of 100 live sessions at 50 tokens/s on SQLite with spans exported over
//! OTLP/HTTP to a local receiver, next to the same app with tracing off, alternating.
//! Spans are made when a run ends, from its log, off the token path: the target is a p99
//! within 1.1× of the untraced one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use actix_web::{web, App, HttpResponse, HttpServer};
use serde_json::json;

use super::live::{self, Live, TOKEN_PERIOD};
use super::Ctx;
use crate::report::{Row, Verdict};
use crate::server::{InProcess, Pace};
use crate::stats::ms;

/// Live sessions measured.
const SESSIONS: usize = 100;
/// The most the traced p99 may be of the untraced one.
const RATIO_TARGET: f64 = 1.1;

/// What the receiver was sent.
#[derive(Default)]
struct Received {
    requests: AtomicU64,
    bytes: AtomicU64,
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let sessions = if ctx.smoke { 10 } else { SESSIONS };
    let pairs = if ctx.smoke { 1 } else { 3 };
    let pace = Pace {
        tokens: ctx.scale.latency_tokens,
        delay_ms: TOKEN_PERIOD.as_millis() as u64,
    };
    let received = Arc::new(Received::default());
    let receiver = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let endpoint = receiver.block_on(start_receiver(received.clone()))?;
    let traced_flags = [
        "--otel-endpoint",
        endpoint.as_str(),
        "--otel-export-delay-ms",
        "200",
    ];
    let measure = |flags: &[&str]| -> anyhow::Result<Live> {
        let (app, _) = InProcess::on_sqlite_with(pace, flags)?;
        let (tokens, warmup) = (ctx.scale.latency_tokens, ctx.scale.warmup_tokens);
        let live = ctx
            .client
            .block_on(live::measure(&app.address, sessions, tokens, warmup));
        app.stop();
        if !live.errors.is_empty() {
            anyhow::bail!("traces: {}", live.errors.join("; "));
        }
        Ok(live)
    };
    let (mut traced, mut untraced) = (Vec::new(), Vec::new());
    for _ in 0..pairs {
        traced.push(measure(&traced_flags)?);
        untraced.push(measure(&[])?);
    }
    let requests = received.requests.load(Ordering::Relaxed);
    if requests == 0 {
        anyhow::bail!("traces: the receiver got no spans");
    }
    let bytes = received.bytes.load(Ordering::Relaxed);
    receiver.shutdown_background();
    Ok(vec![row(sessions, &traced, &untraced, requests, bytes)])
}

/// The median of the runs' values.
fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values[values.len() / 2]
}

fn row(sessions: usize, traced: &[Live], untraced: &[Live], requests: u64, bytes: u64) -> Row {
    let p = |runs: &[Live], pick: fn(&Live) -> u64| median(runs.iter().map(pick).collect());
    let (t50, t99) = (
        p(traced, |l| l.latency.p50_ns),
        p(traced, |l| l.latency.p99_ns),
    );
    let (u50, u99) = (
        p(untraced, |l| l.latency.p50_ns),
        p(untraced, |l| l.latency.p99_ns),
    );
    let ratio = t99 as f64 / u99.max(1) as f64;
    Row::new(format!(
        "18. latency, {sessions} live sessions, traces exported (median of {} runs, p50/p99)",
        traced.len()
    ))
    .tandem(format!("{} / {} ms", ms(t50), ms(t99)))
    .baseline(format!("{} / {} ms tracing off", ms(u50), ms(u99)))
    .ratio(ratio)
    .target(
        format!("p99 ≤ {RATIO_TARGET}× tracing off"),
        Verdict::of(ratio <= RATIO_TARGET),
    )
    .data(json!({
        "sessions": sessions,
        "traced": traced.iter().map(|l| &l.latency).collect::<Vec<_>>(),
        "untraced": untraced.iter().map(|l| &l.latency).collect::<Vec<_>>(),
        "export_requests": requests,
        "export_bytes": bytes,
    }))
}

/// An OTLP/HTTP receiver that counts what it is sent and answers as a collector does.
async fn start_receiver(received: Arc<Received>) -> anyhow::Result<String> {
    let data = web::Data::from(received);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(web::PayloadConfig::new(64 << 20))
            .route(
                "/v1/traces",
                web::post().to(
                    |body: web::Bytes, received: web::Data<Received>| async move {
                        received.requests.fetch_add(1, Ordering::Relaxed);
                        received
                            .bytes
                            .fetch_add(body.len() as u64, Ordering::Relaxed);
                        HttpResponse::Ok()
                            .content_type("application/x-protobuf")
                            .finish()
                    },
                ),
            )
    })
    .workers(1)
    .bind("127.0.0.1:0")?;
    let address = server.addrs()[0];
    tokio::spawn(server.run());
    Ok(format!("http://{address}"))
}
