//! Figure 8, the page: gzipped size of the WASM + JS a first load fetches (`dist/`,
//! rebuilt by `scripts/build.sh page` when older than the page's sources), and time to first transcript paint in
//! headless Chromium for a session of 20 long turns (2,000 events) and one of 200 short
//! ones, measured by `tests/bench/page.mjs` against the real binary. Without Node or
//! Chromium the paint is reported as not measured, with the reason.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context};
use flate2::write::GzEncoder;
use serde_json::{json, Value};

use super::Ctx;
use crate::child::{repo_root, tandem_binary, Tandem};
use crate::client::{self, Frame, Rest, SeqCheck};
use crate::report::{Row, Verdict};
use crate::stats::thousands;

/// Issue 30's target for the WASM + JS a first load fetches, gzipped, in bytes (KB = 1000
/// bytes).
const SIZE_TARGET: u64 = 450_000;
/// The target for the first transcript paint, in milliseconds.
const PAINT_TARGET_MS: f64 = 300.0;
/// Events of a painted session's turn besides its answer's tokens.
const TURN_EVENTS: u64 = 9;

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let dist = repo_root().join("dist");
    let note = refresh_dist(&dist, ctx.smoke);
    let mut rows = vec![size_row(&dist, note)?];
    for &(turns, tokens) in &ctx.scale.page_sessions {
        rows.push(paint(ctx, &dist, turns, tokens)?);
    }
    Ok(rows)
}

/// Rebuilds `dist/` with `scripts/build.sh page` when it is missing or older than the
/// page's sources (not in smoke runs: the build takes minutes); returns a note on what was
/// measured.
fn refresh_dist(dist: &Path, smoke: bool) -> String {
    let root = repo_root();
    let sources = [
        "web",
        "shared/src",
        "markdown/src",
        "Trunk.toml",
        ".cargo/config.toml",
        "scripts/build.sh",
    ];
    let sources = sources.map(|p| root.join(p));
    let newest_source = sources.iter().filter_map(|p| newest(p)).max();
    let built = std::fs::metadata(dist.join("index.html"))
        .and_then(|m| m.modified())
        .ok();
    let fresh = matches!((built, newest_source), (Some(b), Some(s)) if b >= s);
    if fresh {
        return "dist/ up to date".into();
    }
    if smoke {
        return "dist/ older than the sources (smoke runs do not rebuild)".into();
    }
    let built = Command::new(root.join("scripts/build.sh"))
        .arg("page")
        .current_dir(&root)
        .status();
    match built {
        Ok(status) if status.success() => "dist/ rebuilt".into(),
        Ok(status) => format!("scripts/build.sh page failed ({status}); measured the old dist/"),
        Err(error) => format!("scripts/build.sh not runnable ({error}); measured the old dist/"),
    }
}

/// The newest modification time of a file or anything under a folder.
fn newest(path: &Path) -> Option<SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_dir() {
        return meta.modified().ok();
    }
    std::fs::read_dir(path)
        .ok()?
        .filter_map(|entry| newest(&entry.ok()?.path()))
        .max()
}

/// The page's modules as `scripts/build.sh` leaves them in `dist/pkg-<hash>/`: what a first
/// load fetches (the JS, the split loader it imports and the main WASM) against the panels'
/// modules, fetched the first time one opens (`browser/split.test.mjs` checks which is which
/// in Chromium).
fn size_row(dist: &Path, note: String) -> anyhow::Result<Row> {
    let pkg = std::fs::read_dir(dist)
        .with_context(|| {
            format!(
                "{} is missing: build the page with scripts/build.sh page",
                dist.display()
            )
        })?
        .filter_map(|e| Some(e.ok()?.path()))
        .find(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("pkg-"))
        })
        .with_context(|| {
            format!(
                "no pkg-* folder in {}: build the page with scripts/build.sh page",
                dist.display()
            )
        })?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&pkg)?
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("wasm" | "js")))
        .collect();
    files.sort();
    let (mut raw, mut gz, mut later, mut each) = (0u64, 0u64, 0u64, Vec::new());
    for file in &files {
        let bytes = std::fs::read(file)?;
        let mut encoder = GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&bytes)?;
        let zipped = encoder.finish()?.len() as u64;
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let first_load = name.ends_with(".js") || name == "tandem-web_bg.wasm";
        if first_load {
            raw += bytes.len() as u64;
            gz += zipped;
        } else {
            later += zipped;
        }
        each.push(json!({"file": name, "bytes": bytes.len(), "gzipped": zipped, "first_load": first_load}));
    }
    if gz == 0 {
        bail!("no tandem-web_bg.wasm or .js in {}", pkg.display());
    }
    let kb = |n: u64| format!("{:.0} KB", n as f64 / 1000.0);
    Ok(Row::new("8. page: WASM + JS gzipped, first load")
        .tandem(format!(
            "{} ({} raw; panels' modules {} more, on first use; {note})",
            kb(gz),
            kb(raw),
            kb(later)
        ))
        .target("≤ 450 KB", Verdict::of(gz <= SIZE_TARGET))
        .data(json!({"gzipped": gz, "raw": raw, "on_first_use_gzipped": later, "files": each, "note": note})))
}

/// Times the paint of a session of `turns` turns, each answered in `tokens` tokens, with
/// `page.mjs`; "not measured" without Node or Chromium.
fn paint(ctx: &Ctx, dist: &Path, turns: u64, tokens: u64) -> anyhow::Result<Row> {
    let title = "8. page: first transcript paint";
    let script = repo_root().join("tests/bench/page.mjs");
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Ok(Row::not_measured(title, "node is not installed"));
    }
    if let Some(why) = browser_missing(ctx.smoke) {
        return Ok(Row::not_measured(title, &why));
    }
    let binary = tandem_binary()?;
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("tandem.db").display());
    let web = dist.to_string_lossy().to_string();
    // A history of exactly so many events: each token its own event, as when a model
    // streams slower than the log commits (the page's paint is what is measured).
    let flags = ["--web-dir", &web, "--join-deltas", "false"];
    let mut tandem = Tandem::spawn(&binary, &url, &flags)?;
    let (session, events) = ctx.client.block_on(async {
        let rest = Rest::new(&tandem.address);
        tandem.wait_healthy(&rest.http).await?;
        fill(&rest, turns, tokens).await
    })?;
    let page_url = format!("http://{}/#/sessions/{session}", tandem.address);
    let output = Command::new("node")
        .arg(&script)
        .args(["--url", &page_url, "--messages", &turns.to_string()])
        .args(["--reps", &ctx.scale.page_reps.to_string()])
        .current_dir(repo_root())
        .output()?;
    let result: Value = serde_json::from_slice(&output.stdout).map_err(|e| {
        let stderr = String::from_utf8_lossy(&output.stderr);
        anyhow::anyhow!("page.mjs said nothing readable ({e}): {stderr:.300}")
    })?;
    if let Some(why) = result["notMeasured"].as_str() {
        return Ok(Row::not_measured(title, why));
    }
    if let Some(error) = result["error"].as_str() {
        bail!("page.mjs failed: {error}");
    }
    let number = |key: &str| result[key].as_f64().unwrap_or(f64::NAN);
    let painted = format!(
        "transcript painted at {:.0} ms (server-rendered); the page's own: first message {:.0} ms, whole transcript {:.0} ms (history in at {:.0} ms)",
        number("previewMs"),
        number("firstPaintMs"),
        number("fullPaintMs"),
        number("historyMs")
    );
    let met = number("previewMs").min(number("firstPaintMs")) <= PAINT_TARGET_MS;
    let name = format!(
        "{title}, {} events in {turns} turns (cold)",
        thousands(events)
    );
    Ok(Row::new(name)
        .tandem(painted)
        .target("≤ 300 ms", Verdict::of(met))
        .data(json!({"events": events, "turns": turns, "page": result})))
}

/// Installs Chromium and the npm packages `page.mjs` needs when they are missing (with
/// `scripts/setup.sh --browser`, not in smoke runs); why the figure cannot run, if so.
fn browser_missing(smoke: bool) -> Option<String> {
    let root = repo_root();
    let ready = || {
        root.join("tests/node_modules/playwright-core").is_dir()
            && Path::new("/usr/bin/chromium").exists()
    };
    if ready() {
        return None;
    }
    if smoke {
        return Some("Chromium or the npm test packages are missing".into());
    }
    let setup = Command::new(root.join("scripts/setup.sh"))
        .arg("--browser")
        .current_dir(&root)
        .status();
    match setup {
        Ok(status) if status.success() && ready() => None,
        Ok(status) => Some(format!("scripts/setup.sh --browser failed ({status})")),
        Err(error) => Some(format!("scripts/setup.sh not runnable ({error})")),
    }
}

/// A session of `turns` runs of `tokens` tokens each, every frame checked: its id and
/// how many events it holds.
async fn fill(rest: &Rest, turns: u64, tokens: u64) -> anyhow::Result<(String, u64)> {
    let session = rest.create_session().await?;
    let mut socket = client::connect(&rest.address, &session, 0).await?;
    let mut check = SeqCheck::after(0);
    client::until_caught_up(&mut socket, &mut check).await?;
    for _ in 0..turns {
        client::say(&mut socket, &format!("run tokens={tokens} delay_ms=0")).await?;
        loop {
            let text = client::next_text(&mut socket, Duration::from_secs(30)).await?;
            let frame = Frame::parse(&text)?;
            check.take(frame.seq.unwrap_or(0))?;
            if frame.ends_run() {
                break;
            }
        }
    }
    let expected = turns * (tokens + TURN_EVENTS);
    if check.last != expected {
        bail!("the session has {} events, expected {expected}", check.last);
    }
    Ok((session, expected))
}
