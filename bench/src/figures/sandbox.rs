//! Figure 17, the WebAssembly sandbox (issue 54): (a) a sandboxed tool call that echoes
//! 1 KiB, beside the built-in calculator, both through the tool registry as a run calls
//! them; (b) 100 live sessions' token latency with ten sandboxed loops spinning in the
//! same process, beside the same sessions calm, in one run; (c) a `run_python` call that
//! prints one line (RustPython in the sandbox, from its compiled module), beside the echo
//! of (a). The issue's targets: a WASM call's p50 ≤ 1 ms, and the spinning p99 ≤ 1.5× the
//! calm one.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tandem::agent::tools::{ToolContext, ToolRegistry, Workspaces};
use tandem::domain::{SessionId, UserId, UserName};
use tandem::sandbox::call::Call;
use tandem::sandbox::manifest::FileAccess;
use tandem::sandbox::{Limits, Manifest, RunPython, Sandbox, WasmTool};

use super::live::{self, Live, TOKEN_PERIOD};
use super::Ctx;
use crate::report::{Row, Verdict};
use crate::server::{InProcess, Pace};
use crate::stats::{ms, Summary};

/// A WASI command that copies stdin to stdout, as WAT.
const ECHO: &str = r#"(module
  (import "wasi_snapshot_preview1" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "_start") (local $n i32)
    (block $done
      (loop $more
        (i32.store (i32.const 0) (i32.const 1024))
        (i32.store (i32.const 4) (i32.const 65536))
        (br_if $done (call $read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
        (local.set $n (i32.load (i32.const 16)))
        (br_if $done (i32.eqz (local.get $n)))
        (i32.store (i32.const 4) (local.get $n))
        (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))
        (br $more)))))"#;

/// A WASI command that never returns.
const SPIN: &str =
    r#"(module (memory (export "memory") 1) (func (export "_start") (loop $l (br $l))))"#;

/// Loops spinning beside the sessions, each call a second long.
const LOOPS: usize = 10;
const LOOP_CALL: Duration = Duration::from_secs(1);
/// How far the spinning p99 may move from the calm one.
const MAX_RATIO: f64 = 1.5;

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let mut rows = tool_calls(ctx)?;
    let echo_p50 = rows[0].data["echo"]["p50_ns"].as_u64().unwrap_or(0);
    rows.push(python_call(ctx, echo_p50)?);
    rows.push(latency_beside_loops(ctx)?);
    Ok(rows)
}

/// The interpreter `scripts/setup.sh` builds (or `TANDEM_PYTHON_WASM`).
fn interpreter() -> Option<PathBuf> {
    let path = match std::env::var_os("TANDEM_PYTHON_WASM") {
        Some(path) => PathBuf::from(path),
        None => {
            let tools = std::env::var_os("TANDEM_TOOLS_DIR")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME")
                        .map(|home| PathBuf::from(home).join(".cache/tandem-tools"))
                })?;
            tools.join("rustpython.wasm")
        }
    };
    path.is_file().then_some(path)
}

/// (c): `run_python` printing one line, through the registry as a run calls it.
fn python_call(ctx: &Ctx, echo_p50_ns: u64) -> anyhow::Result<Row> {
    const FIGURE: &str = "17c. a run_python call that prints one line (p50/p99/p99.9/max)";
    let Some(interpreter) = interpreter() else {
        return Ok(Row::not_measured(
            FIGURE,
            "no interpreter (scripts/setup.sh builds it)",
        ));
    };
    let reps = if ctx.smoke { 3 } else { 50 };
    // The module cache the tests share: compiled once on this machine.
    let cache = std::env::current_dir()?.join("target/python-wasm-cache");
    let limits = Limits {
        fuel: 50_000_000_000,
        memory_bytes: 128 << 20,
        timeout: Duration::from_secs(10),
    };
    let sandbox = Sandbox::new(limits, Some(cache))?;
    let folder = tempfile::tempdir()?;
    let workspaces = Arc::new(Workspaces::new(folder.path().to_path_buf(), 1 << 20));
    let loaded = Instant::now();
    let python = RunPython::load(&interpreter, FileAccess::None, sandbox, workspaces.clone())?;
    let load_ms = loaded.elapsed().as_secs_f64() * 1e3;
    let mut registry = ToolRegistry::builtin(workspaces);
    registry.register(Arc::new(python));
    let context = ToolContext {
        user: UserName::parse("bench").map_err(anyhow::Error::msg)?,
        session: SessionId::generate(),
        owner: UserId::LOCAL,
    };
    let program = json!({"code": "print('hello from the sandbox')"}).to_string();
    let mut took = Vec::with_capacity(reps);
    for _ in 0..reps {
        let started = Instant::now();
        let result = ctx
            .client
            .block_on(registry.invoke("run_python", &program, &context));
        took.push(started.elapsed().as_nanos() as u64);
        anyhow::ensure!(
            result.contains("hello from the sandbox") && result.contains("\"exitCode\":0"),
            "run_python failed: {result}"
        );
    }
    let call = Summary::of(&mut took);
    Ok(Row::new(FIGURE)
        .tandem(format!(
            "{} (the interpreter loaded in {load_ms:.0} ms)",
            call.display_ms()
        ))
        .baseline(format!(
            "p50 {} ms a WASM tool's echo (17a)",
            ms(echo_p50_ns)
        ))
        .ratio(call.p50_ns as f64 / echo_p50_ns.max(1) as f64)
        .data(json!({"call": call, "loadMs": load_ms, "p50_ms": ms(call.p50_ns)})))
}

fn sandbox() -> anyhow::Result<Arc<Sandbox>> {
    let limits = Limits {
        fuel: u64::MAX / 2,
        memory_bytes: 128 << 20,
        timeout: Duration::from_secs(30),
    };
    Sandbox::new(limits, None)
}

/// (a): the echo tool and the calculator, called one after the other, many times.
fn tool_calls(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let reps = if ctx.smoke { 20 } else { 2_000 };
    let sandbox = sandbox()?;
    let program = sandbox.prepare(&wat::parse_str(ECHO)?)?;
    let manifest =
        json!({"description": "Echoes its arguments.", "parameters": {"type": "object"}});
    let manifest = Manifest::parse(manifest.to_string().as_bytes()).map_err(anyhow::Error::msg)?;
    let folder = tempfile::tempdir()?;
    let workspaces = Arc::new(Workspaces::new(folder.path().to_path_buf(), 1 << 20));
    let mut registry = ToolRegistry::builtin(workspaces.clone());
    let echo = WasmTool::new(
        "echo".into(),
        manifest,
        program,
        sandbox.clone(),
        workspaces,
    );
    registry.register(Arc::new(echo));
    let context = ToolContext {
        user: UserName::parse("bench").map_err(anyhow::Error::msg)?,
        session: SessionId::generate(),
        owner: UserId::LOCAL,
    };
    let kilobyte = json!({"text": "x".repeat(1000)}).to_string();
    let sum = json!({"expression": "(12 + 30) * 2 / 4"}).to_string();
    let (mut echoes, mut sums) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    for _ in 0..reps {
        for (name, arguments, took) in [
            ("echo", &kilobyte, &mut echoes),
            ("calculator", &sum, &mut sums),
        ] {
            let started = Instant::now();
            let result = ctx
                .client
                .block_on(registry.invoke(name, arguments, &context));
            took.push(started.elapsed().as_nanos() as u64);
            anyhow::ensure!(!result.contains("\"error\""), "{name} failed: {result}");
            if name == "echo" {
                anyhow::ensure!(result == *arguments, "the echo changed its input");
            }
        }
    }
    let (echo, sum) = (Summary::of(&mut echoes), Summary::of(&mut sums));
    Ok(vec![Row::new(
        "17a. a WASM tool call, 1 KiB echoed (p50/p99/p99.9/max)",
    )
    .tandem(echo.display_ms())
    .baseline(format!("{} the built-in calculator", sum.display_ms()))
    .ratio(echo.p50_ns as f64 / sum.p50_ns.max(1) as f64)
    .target("p50 ≤ 1 ms", Verdict::of(echo.p50_ns <= 1_000_000))
    .data(
        json!({"echo": echo, "calculator": sum, "p50_ms": ms(echo.p50_ns)}),
    )])
}

/// (b): live sessions calm, then with [`LOOPS`] sandboxed loops spinning in the process.
fn latency_beside_loops(ctx: &Ctx) -> anyhow::Result<Row> {
    let (sessions, tokens) = (ctx.scale.disturbed_sessions, ctx.scale.latency_tokens);
    let pace = Pace {
        tokens,
        delay_ms: TOKEN_PERIOD.as_millis() as u64,
    };
    let (app, _store) = InProcess::on_sqlite(pace)?;
    let measure = || {
        ctx.client.block_on(live::measure(
            &app.address,
            sessions,
            tokens,
            ctx.scale.warmup_tokens,
        ))
    };
    let calm = measure();
    // What a core spinning outside the sandbox costs on this machine: one native thread in
    // the idle scheduling class, as the sandbox's calls run.
    let native = Arc::new(AtomicBool::new(true));
    let spinner = {
        let native = native.clone();
        std::thread::spawn(move || {
            libc_idle();
            let mut n = 0u64;
            while native.load(Ordering::Relaxed) {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        })
    };
    let beside_native = measure();
    native.store(false, Ordering::Relaxed);
    let _ = spinner.join();
    let sandbox = sandbox()?;
    let spin = sandbox.prepare(&wat::parse_str(SPIN)?)?;
    let spinning = Arc::new(AtomicBool::new(true));
    let loops: Vec<_> = (0..LOOPS)
        .map(|_| {
            let (sandbox, spin, spinning) = (sandbox.clone(), spin.clone(), spinning.clone());
            app.runtime_handle().spawn(async move {
                let mut calls = 0u32;
                while spinning.load(Ordering::Relaxed) {
                    let limits = Limits {
                        timeout: LOOP_CALL,
                        ..sandbox.limits()
                    };
                    let call = Call {
                        name: "spin".into(),
                        args: Vec::new(),
                        stdin: Vec::new(),
                        limits,
                        files: None,
                    };
                    sandbox.call(&spin, call).await;
                    calls += 1;
                }
                calls
            })
        })
        .collect();
    let busy = measure();
    spinning.store(false, Ordering::Relaxed);
    let calls: u32 = app.block_on(async {
        let mut total = 0;
        for spinner in loops {
            total += spinner.await.unwrap_or(0);
        }
        total
    });
    app.stop();
    let mut errors = Vec::new();
    for (name, live) in [
        ("calm", &calm),
        ("a native loop", &beside_native),
        ("spinning", &busy),
    ] {
        errors.extend(live.errors.iter().map(|e| format!("{name}: {e}")));
    }
    if !errors.is_empty() {
        anyhow::bail!("latency beside sandboxed loops: {}", errors.join("; "));
    }
    Ok(row(sessions, &busy, &calm, &beside_native, calls))
}

fn row(sessions: usize, busy: &Live, calm: &Live, native: &Live, calls: u32) -> Row {
    let (b, c, n) = (&busy.latency, &calm.latency, &native.latency);
    let ratio = b.p99_ns as f64 / c.p99_ns.max(1) as f64;
    let met = ratio <= MAX_RATIO && busy.problems.is_empty() && calm.problems.is_empty();
    Row::new(format!(
        "17b. latency, {sessions} sessions, {LOOPS} sandboxed loops spinning (p50/p99/p99.9/max)"
    ))
    .tandem(format!(
        "{} ({calls} spinning calls of 1 s)",
        b.display_ms()
    ))
    .baseline(format!(
        "{} calm; {} beside one native idle-class loop",
        c.display_ms(),
        n.display_ms()
    ))
    .ratio(ratio)
    .target("p99 ≤ 1.5× calm", Verdict::of(met))
    .data(json!({
        "spinning": b, "calm": c, "nativeLoop": n, "calls": calls,
        "p99_ms": ms(b.p99_ns),
        "nativeLoopRatio": n.p99_ns as f64 / c.p99_ns.max(1) as f64,
    }))
}

/// Puts this thread in the idle scheduling class, as the sandbox's call threads are.
fn libc_idle() -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `sched_setscheduler` reads `param` during the call; `pid = 0` is this thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) == 0 }
}
