//! The sandbox: one Wasmtime engine for every module, the ticker that moves its epoch
//! (what stops a module that never yields; parked while no call runs, so an idle sandbox
//! costs nothing), and the threads calls run on.
//!
//! A call runs on a thread of its own in Linux's idle scheduling class (`SCHED_IDLE`),
//! never on the async workers: a module spinning through its limits takes a core only when
//! the threads that stream tokens to everyone else leave it free. Its time limit is
//! wall-clock time, so on a saturated machine a call gets what the server leaves it. At most
//! [`MAX_CONCURRENT_CALLS`] run at once; more wait their turn.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::{Config, Engine, Linker};

use super::call::{self, Call, Outcome};
use super::limits::Limits;
use super::program::{self, Program, ProgramError};
use super::state::{self, CallState};

/// How often the epoch moves: the resolution of the time limit.
pub const TICK: Duration = Duration::from_millis(10);
/// Calls running at once at most, whatever the machine; the others wait.
pub const MAX_CONCURRENT_CALLS: usize = 16;
/// The WebAssembly stack a call may use: deep recursion ends there.
const MAX_WASM_STACK: usize = 1 << 20;

/// The right to run one call now, held by the call's thread until it ends.
pub struct Turn {
    _permit: Option<OwnedSemaphorePermit>,
}

/// The engine every sandboxed module runs on.
pub struct Sandbox {
    engine: Engine,
    linker: Linker<CallState>,
    cache: Option<PathBuf>,
    limits: Limits,
    turns: Arc<Semaphore>,
    ticker: Arc<Ticker>,
}

/// The thread that moves the engine's epoch while calls run, and sleeps (parked) while
/// none does: an idle sandbox costs nothing.
struct Ticker {
    /// Calls running now.
    running: AtomicUsize,
    /// Cleared when the sandbox is dropped: the thread ends.
    alive: AtomicBool,
    thread: std::sync::OnceLock<std::thread::Thread>,
}

impl Ticker {
    fn wake(&self) {
        if let Some(thread) = self.thread.get() {
            thread.unpark();
        }
    }
}

/// A running call, counted by the ticker until dropped.
struct Ticking(Arc<Ticker>);

impl Ticking {
    fn start(ticker: Arc<Ticker>) -> Self {
        ticker.running.fetch_add(1, Ordering::SeqCst);
        ticker.wake();
        Ticking(ticker)
    }
}

impl Drop for Ticking {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Sandbox {
    /// A sandbox whose calls get at most `limits`, keeping compiled modules in `cache`
    /// (none: compiled at each start).
    pub fn new(limits: Limits, cache: Option<PathBuf>) -> anyhow::Result<Arc<Sandbox>> {
        let mut config = Config::new();
        config
            .consume_fuel(true)
            .epoch_interruption(true)
            .max_wasm_stack(MAX_WASM_STACK);
        let engine = Engine::new(&config)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p1::add_to_linker_sync(&mut linker, state::wasi)?;
        let ticker = Arc::new(Ticker {
            running: AtomicUsize::new(0),
            alive: AtomicBool::new(true),
            thread: std::sync::OnceLock::new(),
        });
        let (ticks, ticking) = (engine.clone(), ticker.clone());
        let thread = std::thread::Builder::new()
            .name("tandem-sandbox-ticker".into())
            .spawn(move || {
                // The epoch's clock, not a wait for anything: each tick lets every running
                // call check its deadline. Parked while no call runs (a call unparks it).
                while ticking.alive.load(Ordering::SeqCst) {
                    if ticking.running.load(Ordering::SeqCst) == 0 {
                        std::thread::park();
                        continue;
                    }
                    std::thread::sleep(TICK);
                    ticks.increment_epoch();
                }
            })?;
        let _ = ticker.thread.set(thread.thread().clone());
        Ok(Arc::new(Sandbox {
            engine,
            linker,
            cache,
            limits,
            turns: Arc::new(Semaphore::new(concurrent_calls())),
            ticker,
        }))
    }

    /// The most a call may use; a tool may ask for less.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Checks, compiles (or reads back from the cache) and links a module.
    pub fn prepare(&self, bytes: &[u8]) -> Result<Program, ProgramError> {
        program::prepare(&self.engine, &self.linker, self.cache.as_deref(), bytes)
    }

    /// Waits until a call may run (one of the few that run at once).
    pub async fn turn(&self) -> Turn {
        // The semaphore is never closed: an error cannot happen, and would only mean no
        // turn to hold.
        Turn {
            _permit: self.turns.clone().acquire_owned().await.ok(),
        }
    }

    /// Waits for a turn, then runs `call` of `program`.
    pub async fn call(&self, program: &Program, call: Call) -> Outcome {
        let turn = self.turn().await;
        self.run(turn, program, call).await
    }

    /// Runs `call` of `program` in `turn`, on a thread of its own that holds the turn until
    /// the call ends: a caller that stops waiting (a tool call's timeout) frees no turn
    /// while the module still runs.
    pub async fn run(&self, turn: Turn, program: &Program, call: Call) -> Outcome {
        let (done, outcome) = tokio::sync::oneshot::channel();
        let program = program.clone();
        let ticker = self.ticker.clone();
        let spawned = std::thread::Builder::new()
            .name("tandem-sandbox-call".into())
            .spawn(move || {
                let _turn = turn;
                let _ticking = Ticking::start(ticker);
                lowest_priority();
                let _ = done.send(call::run(&program, call));
            });
        if let Err(error) = spawned {
            return refused(&format!("cannot start the call: {error}"));
        }
        outcome
            .await
            .unwrap_or_else(|_| refused("the call failed unexpectedly"))
    }
}

/// How many calls may run at once: one core fewer than the machine has (at least one, at
/// most [`MAX_CONCURRENT_CALLS`]), so a core is always left to the server.
fn concurrent_calls() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
    cores.saturating_sub(1).clamp(1, MAX_CONCURRENT_CALLS)
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.ticker.alive.store(false, Ordering::SeqCst);
        self.ticker.wake();
    }
}

/// Puts this thread in Linux's idle scheduling class (`SCHED_IDLE`): it runs only on a
/// core no normal thread wants, and a waking server thread takes the core from it at once.
/// Failing that, at the lowest normal priority (`nice` 19); failing that too, as it is.
/// Linux schedules threads apart, so this thread alone.
fn lowest_priority() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `sched_setscheduler` reads `param`, which lives across the call; `pid = 0`
    // is the calling thread.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } == 0 {
        return;
    }
    // SAFETY: `setpriority` reads no memory of ours; `who = 0` is the calling thread.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) } != 0 {
        tracing::debug!("cannot lower a sandboxed call's priority");
    }
}

fn refused(why: &str) -> Outcome {
    Outcome::Stopped {
        why: why.to_string(),
        limit: None,
        stdout: Vec::new(),
        stderr: Vec::new(),
    }
}
