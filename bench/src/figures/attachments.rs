//! Figure 16, attachments (issue 28): a 20 MiB upload and its download through the real
//! binary (SQLite), next to the same bytes copied over a plain loopback TCP connection each
//! way; and the binary's resident memory while ten 20 MiB uploads stream at once, above
//! its idle memory (an upload holds a chunk, never the file).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure};
use futures_util::future::join_all;
use serde_json::json;

use super::Ctx;
use crate::child::{tandem_binary, Tandem};
use crate::client::Rest;
use crate::report::{Row, Verdict};
use crate::stats::bytes;

/// The file's size.
const FILE_BYTES: usize = 20 * 1024 * 1024;
/// Uploads at once while memory is sampled.
const CONCURRENT: usize = 10;
/// Targets: throughput as a share of the plain copy's, and memory above idle.
const THROUGHPUT_TARGET: f64 = 0.5;
const MEMORY_TARGET: f64 = 100.0 * 1024.0 * 1024.0;
const SAMPLE_EVERY: Duration = Duration::from_millis(20);

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let size = if ctx.smoke {
        FILE_BYTES / 16
    } else {
        FILE_BYTES
    };
    let file = noise(size);
    let binary = tandem_binary()?;
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("tandem.db").display());
    let quota = (size * (CONCURRENT + 4)).to_string();
    let extra = ["--attachment-quota-bytes", quota.as_str()];
    let mut tandem = Tandem::spawn(&binary, &url, &extra)?;
    let rest = Rest::new(&tandem.address);
    let (through_tandem, idle, peak) = ctx.client.block_on(async {
        tandem.wait_healthy(&rest.http).await?;
        let session = rest.create_session().await?;
        // One round to warm up, then the timed one.
        upload(&rest, &session, &file, "warm.bin").await?;
        let started = Instant::now();
        let id = upload(&rest, &session, &file, "timed.bin").await?;
        let back = download(&rest, &id).await?;
        let took = started.elapsed();
        ensure!(back == file, "the download differs from the upload");

        tokio::time::sleep(Duration::from_millis(500)).await;
        let idle = tandem.rss()?;
        let mut peak = idle;
        let others: Vec<Vec<u8>> = (0..CONCURRENT)
            .map(|n| {
                let mut other = file.clone();
                other[0] = n as u8;
                other[1] = other[1].wrapping_add(1);
                other
            })
            .collect();
        let uploads = join_all(others.iter().enumerate().map(|(n, bytes)| {
            upload(
                &rest,
                &session,
                bytes,
                if n == 0 { "a.bin" } else { "b.bin" },
            )
        }));
        tokio::pin!(uploads);
        let mut sample = tokio::time::interval(SAMPLE_EVERY);
        let done = loop {
            tokio::select! {
                done = &mut uploads => break done,
                _ = sample.tick() => peak = peak.max(tandem.rss()?),
            }
        };
        for stored in done {
            stored?;
        }
        anyhow::Ok((took, idle, peak))
    })?;
    tandem.kill();
    let through_copy = loopback_copy(&file)?;
    let ratio = through_copy.as_secs_f64() / through_tandem.as_secs_f64();
    let mib = size as f64 / (1024.0 * 1024.0);
    let rate = |took: Duration| format!("{:.0} MiB/s", 2.0 * mib / took.as_secs_f64());
    let above = peak.saturating_sub(idle) as f64;
    Ok(vec![
        Row::new(format!(
            "16. a {} upload and its download (both ways)",
            bytes(size as f64)
        ))
        .tandem(rate(through_tandem))
        .baseline(format!("{} loopback copy", rate(through_copy)))
        .ratio(ratio)
        .target(
            format!("≥ {THROUGHPUT_TARGET} of the copy"),
            Verdict::of(ratio >= THROUGHPUT_TARGET),
        )
        .data(json!({"bytes": size, "tandem_s": through_tandem.as_secs_f64(), "copy_s": through_copy.as_secs_f64()})),
        Row::new(format!(
            "16. memory during {CONCURRENT} concurrent {} uploads (above idle)",
            bytes(size as f64)
        ))
        .tandem(bytes(above))
        .baseline(format!("{} idle", bytes(idle as f64)))
        .target(
            format!("< {}", bytes(MEMORY_TARGET)),
            Verdict::of(above < MEMORY_TARGET),
        )
        .data(json!({"idle": idle, "peak": peak})),
    ])
}

/// `size` bytes of no known kind (nothing to compress or sniff): a xorshift's output.
fn noise(size: usize) -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..size)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// Uploads `file`; its attachment id.
async fn upload(rest: &Rest, session: &str, file: &[u8], name: &str) -> anyhow::Result<String> {
    let url = format!(
        "http://{}/api/sessions/{session}/attachments?name={name}",
        rest.address
    );
    let response = rest
        .http
        .post(url)
        .header("content-type", "application/octet-stream")
        .body(file.to_vec())
        .send()
        .await?;
    ensure!(response.status() == 201, "upload: {}", response.status());
    let body: serde_json::Value = response.json().await?;
    body["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow!("no id in {body}"))
}

async fn download(rest: &Rest, id: &str) -> anyhow::Result<Vec<u8>> {
    let url = format!("http://{}/api/attachments/{id}", rest.address);
    let response = rest.http.get(url).send().await?;
    ensure!(response.status() == 200, "download: {}", response.status());
    Ok(response.bytes().await?.to_vec())
}

/// The same bytes over a plain loopback TCP connection, there and back.
fn loopback_copy(file: &[u8]) -> anyhow::Result<Duration> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let address = listener.local_addr()?;
    let len = file.len();
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut stream, _) = listener.accept()?;
        let mut got = vec![0u8; len];
        stream.read_exact(&mut got)?;
        stream.write_all(&got)
    });
    let started = Instant::now();
    let mut stream = TcpStream::connect(address)?;
    stream.write_all(file)?;
    let mut back = vec![0u8; len];
    stream.read_exact(&mut back)?;
    let took = started.elapsed();
    echo.join()
        .map_err(|_| anyhow!("the echo thread panicked"))??;
    ensure!(back == file, "the loopback copy differs");
    Ok(took)
}
