//! `tandem-bench`: measures Tandem against the limits of this machine (issue 5).
//!
//! `cargo run -p tandem-bench --release` runs every figure next to its baseline, prints
//! the table and writes it with the machine's facts to `target/bench/<timestamp>.json`
//! and `target/bench/latest.json`. `--smoke` runs a tiny version of each measurement
//! that only checks it runs and that frames are right; the exit code is non-zero on a
//! correctness failure or an error, never because of a figure. `--only a,b` picks
//! figures by key (streaming, latency, persistence, capacity, resume, restart, memory,
//! page, postgres, instances, …, branches, attachments). The PostgreSQL figures create scratch databases on the
//! server `TANDEM_TEST_POSTGRES` names (default `postgres://postgres@127.0.0.1:5432/postgres`).
//!
//! # Layout
//! - [`figures`]: one module per figure; `live` is the latency/capacity harness.
//! - [`server`] runs the real app in-process (on SQLite or the [`noop_store`]);
//!   [`child`] runs the real binary; [`seed`] writes event logs straight into a store.
//! - [`client`]: sockets, REST, frame checks. [`stats`], [`machine`], [`report`].

mod child;
mod client;
mod figures;
mod machine;
mod noop_store;
mod report;
mod seed;
mod server;
mod stats;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

use figures::{Ctx, Scale, ALL};
use report::{Report, Row, Verdict};

/// Benchmarks Tandem against baselines measured in the same run.
#[derive(Debug, Parser)]
#[command(name = "tandem-bench")]
struct Args {
    /// Tiny version of every measurement: checks it runs and frames are right.
    #[arg(long)]
    smoke: bool,
    /// Only these figures (comma-separated keys).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(unknown) = args.only.iter().find(|k| !ALL.iter().any(|f| f.key == *k)) {
        let keys: Vec<&str> = ALL.iter().map(|f| f.key).collect();
        eprintln!(
            "tandem-bench: unknown figure `{unknown}`; use {}",
            keys.join(", ")
        );
        return ExitCode::from(2);
    }
    if std::env::var_os("TANDEM_BENCH_LOG").is_some() {
        tandem::telemetry::init("warn");
    }
    let started = Instant::now();
    let mut report = Report {
        started_at: chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string(),
        mode: if args.smoke { "smoke" } else { "full" },
        profile: child::PROFILE,
        machine_before: machine::facts(),
        machine_after: None,
        cpu_busy_before: machine::cpu_busy(Duration::from_secs(1)),
        cpu_busy_after: None,
        elapsed_seconds: 0.0,
        rows: Vec::new(),
        failures: Vec::new(),
    };
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime for the clients");
    let scale = if args.smoke {
        Scale::smoke()
    } else {
        Scale::full()
    };
    let ctx = Ctx {
        scale,
        smoke: args.smoke,
        client,
    };
    for figure in ALL
        .iter()
        .filter(|f| args.only.is_empty() || args.only.iter().any(|k| k == f.key))
    {
        eprintln!("tandem-bench: {} …", figure.title);
        let clock = Instant::now();
        let rows = (figure.run)(&ctx).unwrap_or_else(|error| {
            report.failures.push(format!("{}: {error:#}", figure.title));
            vec![Row::failed(figure.title, format!("{error:#}"))]
        });
        eprintln!(
            "tandem-bench: {} took {:.1} s",
            figure.title,
            clock.elapsed().as_secs_f64()
        );
        report.rows.extend(rows);
    }
    if args.smoke {
        // A smoke run's numbers mean nothing: only correctness is judged.
        for row in &mut report.rows {
            if matches!(row.verdict, Verdict::Met | Verdict::Missed) {
                row.verdict = Verdict::Info;
            }
        }
    }
    report.machine_after = Some(machine::facts());
    report.cpu_busy_after = machine::cpu_busy(Duration::from_secs(1));
    report.elapsed_seconds = started.elapsed().as_secs_f64();
    finish(&report)
}

/// Prints the table and the machine, writes the JSON; the exit code says whether
/// everything ran correctly.
fn finish(report: &Report) -> ExitCode {
    let before = &report.machine_before;
    println!(
        "\nTandem benchmark ({} run, {} profile) on {} × {}; load average before {:?}, after {:?}; \
         cores busy in a quiet second before: {}, after: {}\n",
        report.mode,
        report.profile,
        before.cores,
        before.cpu_model,
        before.load_average,
        report.machine_after.as_ref().map(|f| f.load_average),
        busy(report.cpu_busy_before),
        busy(report.cpu_busy_after),
    );
    print!("{}", report.table());
    match report.write(&child::target_dir().join("bench")) {
        Ok(path) => println!(
            "\nwritten to {} and latest.json ({:.0} s)",
            path.display(),
            report.elapsed_seconds
        ),
        Err(error) => eprintln!("tandem-bench: cannot write the JSON: {error:#}"),
    }
    if report.failures.is_empty() {
        return ExitCode::SUCCESS;
    }
    eprintln!("\ntandem-bench: {} failure(s):", report.failures.len());
    for failure in &report.failures {
        eprintln!("  - {failure}");
    }
    ExitCode::FAILURE
}

fn busy(share: Option<f64>) -> String {
    share.map_or("unknown".into(), |s| format!("{:.0}%", s * 100.0))
}
