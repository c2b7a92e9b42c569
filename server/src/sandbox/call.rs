//! One call of a sandboxed module, run to its end on the calling thread: its arguments
//! on stdin, its result on stdout, under its fuel, memory and time limits.
//!
//! Each call gets a store of its own: fresh WASI state (no environment, `argv = [NAME]`,
//! clocks and random, no network, and `/workspace` only if its tool may see the user's
//! files), its fuel, a memory cap, and a deadline the engine's epoch ticks check, so a
//! module that never yields still stops.

use std::time::Instant;

use wasmtime::{Store, Trap, UpdateDeadline};
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
use wasmtime_wasi::{FsPerms, I32Exit, WasiCtxBuilder};

use super::files::WorkspaceAccess;
use super::limits::{Limit, Limits};
use super::program::Program;
use super::state::{CallState, MemoryCap};

/// The most bytes a call may write to stdout, and to stderr.
pub const MAX_OUTPUT_BYTES: usize = 1 << 20;
/// Where a tool that may see the user's files finds them.
pub const WORKSPACE_PATH: &str = "/workspace";
/// How many epoch ticks pass between two measures of the workspace of a call that writes
/// (one tick is [`super::engine::TICK`]).
const QUOTA_EVERY_TICKS: u64 = 10;

/// What a call runs with.
pub struct Call {
    /// The tool's name, the module's `argv[0]`.
    pub name: String,
    /// The rest of the module's `argv` (none for a tool of a folder).
    pub args: Vec<String>,
    /// What the module reads on stdin: the arguments, as JSON.
    pub stdin: Vec<u8>,
    pub limits: Limits,
    /// The user's workspace, if the tool may see it.
    pub files: Option<WorkspaceAccess>,
}

/// How a call ended, with what it wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It exited with `code` (0 when `_start` returned).
    Exited {
        code: i32,
        stdout: Vec<u8>,
        stderr: Vec<u8>,
    },
    /// It trapped, reached a limit, or could not start.
    Stopped {
        why: String,
        limit: Option<Limit>,
        stdout: Vec<u8>,
        stderr: Vec<u8>,
    },
}

/// Runs `call` of `program` on this thread until it ends.
pub fn run(program: &Program, call: Call) -> Outcome {
    let stdout = MemoryOutputPipe::new(MAX_OUTPUT_BYTES);
    let stderr = MemoryOutputPipe::new(MAX_OUTPUT_BYTES);
    let mut wasi = WasiCtxBuilder::new();
    wasi.stdin(MemoryInputPipe::new(call.stdin))
        .stdout(stdout.clone())
        .stderr(stderr.clone())
        .args(&[std::slice::from_ref(&call.name), &call.args[..]].concat())
        .allow_blocking_current_thread(true);
    if let Some(files) = &call.files {
        let perms = match files.writes() {
            true => FsPerms::ReadWrite,
            false => FsPerms::ReadOnly,
        };
        if let Err(error) = wasi.preopened_dir(files.path(), WORKSPACE_PATH, perms) {
            let why = format!("cannot open the workspace: {error:#}");
            return stopped(why, None, &stdout, &stderr);
        }
    }
    let state = CallState {
        wasi: wasi.build_p1(),
        memory: MemoryCap {
            max_bytes: usize::try_from(call.limits.memory_bytes).unwrap_or(usize::MAX),
            refused: false,
        },
        deadline: Instant::now() + call.limits.timeout,
        files: call.files,
        ticks: 0,
        stopped_by: None,
    };
    let mut store = Store::new(program.pre.module().engine(), state);
    store.limiter(|state| &mut state.memory);
    if let Err(error) = store.set_fuel(call.limits.fuel) {
        return stopped(
            format!("cannot set the fuel: {error:#}"),
            None,
            &stdout,
            &stderr,
        );
    }
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|mut context| {
        let state = context.data_mut();
        state.ticks += 1;
        if Instant::now() >= state.deadline {
            state.stopped_by = Some(Limit::Time);
            return Err(wasmtime::Error::msg("time limit"));
        }
        let measure = state.ticks % QUOTA_EVERY_TICKS == 0;
        if measure
            && state
                .files
                .as_ref()
                .is_some_and(WorkspaceAccess::over_quota)
        {
            state.stopped_by = Some(Limit::Quota);
            return Err(wasmtime::Error::msg("quota"));
        }
        Ok(UpdateDeadline::Continue(1))
    });
    let ran = program.pre.instantiate(&mut store).and_then(|instance| {
        let start = instance.get_typed_func::<(), ()>(&mut store, "_start")?;
        start.call(&mut store, ())
    });
    let state = store.data();
    // Measured only if nothing else stopped the call: it walks the workspace.
    let over_quota = || {
        let files = state.files.as_ref();
        files.is_some_and(WorkspaceAccess::over_quota)
    };
    let output_full = |pipe: &MemoryOutputPipe| pipe.contents().len() >= MAX_OUTPUT_BYTES;
    let exit = match &ran {
        Ok(()) => Some(0),
        Err(error) => error.downcast_ref::<I32Exit>().map(|exit| exit.0),
    };
    let limit = state
        .stopped_by
        .or_else(|| ran.as_ref().err().and_then(trap_limit))
        .or_else(|| (exit != Some(0) && state.memory.refused).then_some(Limit::Memory))
        .or_else(|| over_quota().then_some(Limit::Quota))
        .or_else(|| (output_full(&stdout) || output_full(&stderr)).then_some(Limit::Output));
    match (exit, limit) {
        (Some(code), None) => Outcome::Exited {
            code,
            stdout: stdout.contents().to_vec(),
            stderr: stderr.contents().to_vec(),
        },
        (_, Some(limit)) => stopped(
            limit_message(limit, &call.limits),
            Some(limit),
            &stdout,
            &stderr,
        ),
        (None, None) => {
            let error = ran.err().map(|e| format!("{e:#}")).unwrap_or_default();
            stopped(format!("the tool failed: {error}"), None, &stdout, &stderr)
        }
    }
}

/// The limit a trap means, if it means one.
fn trap_limit(error: &wasmtime::Error) -> Option<Limit> {
    match error.downcast_ref::<Trap>()? {
        Trap::OutOfFuel => Some(Limit::Fuel),
        Trap::StackOverflow => Some(Limit::Stack),
        Trap::Interrupt => Some(Limit::Time),
        _ => None,
    }
}

/// What an error result says of `limit`.
fn limit_message(limit: Limit, limits: &Limits) -> String {
    match limit {
        Limit::Fuel => format!("the tool ran out of fuel ({} units)", limits.fuel),
        Limit::Memory => format!(
            "the tool asked for more than its {} MiB of memory",
            limits.memory_bytes >> 20
        ),
        Limit::Time => format!(
            "the tool ran out of time ({} ms)",
            limits.timeout.as_millis()
        ),
        Limit::Stack => "the tool recursed deeper than its stack allows".into(),
        Limit::Output => format!("the tool wrote more than {MAX_OUTPUT_BYTES} bytes of output"),
        Limit::Quota => "the tool wrote more than the workspace quota leaves".into(),
    }
}

fn stopped(
    why: String,
    limit: Option<Limit>,
    stdout: &MemoryOutputPipe,
    stderr: &MemoryOutputPipe,
) -> Outcome {
    Outcome::Stopped {
        why,
        limit,
        stdout: stdout.contents().to_vec(),
        stderr: stderr.contents().to_vec(),
    }
}
