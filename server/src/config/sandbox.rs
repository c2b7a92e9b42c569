//! Settings of the WebAssembly sandbox: where an operator's tools are, where compiled
//! modules are kept, and the most a call may use (a tool's manifest may ask for less,
//! never more).

use std::path::PathBuf;

use clap::Args;

/// The default fuel of a call. Wasmtime takes a unit per WebAssembly operation: a tight
/// loop of compiled code burns some 10 billion a second on one core here, an interpreter
/// (Python) fewer, so this is a few seconds of work; the time limit usually ends a call
/// first (docs/tools.md, "Limits").
pub const DEFAULT_WASM_FUEL: u64 = 50_000_000_000;
/// The most memory a call may be given, in MiB.
pub const MAX_WASM_MEMORY_MIB: u32 = 1024;
/// The longest a call may be given: a tool call's own time limit.
pub const MAX_WASM_TIMEOUT_MS: u64 = 30_000;

/// The sandbox.
#[derive(Debug, Clone, Args)]
pub struct SandboxArgs {
    /// A folder of WebAssembly tools: each `NAME.wasm` with its manifest `NAME.json`
    /// beside it is the tool `NAME` (docs/tools.md).
    #[arg(long, env = "TANDEM_WASM_TOOLS")]
    pub wasm_tools: Option<PathBuf>,
    /// Where compiled modules are kept between starts, by the hash of each module.
    #[arg(long, env = "TANDEM_WASM_CACHE_DIR", default_value = "data/wasm-cache")]
    pub wasm_cache_dir: PathBuf,
    /// Fuel a sandboxed call may burn: about one unit per WebAssembly instruction.
    #[arg(long, env = "TANDEM_WASM_FUEL", default_value_t = DEFAULT_WASM_FUEL,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub wasm_fuel: u64,
    /// Memory a sandboxed call may hold, in MiB (at most 1024).
    #[arg(long, env = "TANDEM_WASM_MEMORY_MIB", default_value_t = 128,
          value_parser = clap::value_parser!(u32).range(1..=MAX_WASM_MEMORY_MIB as i64))]
    pub wasm_memory_mib: u32,
    /// Wall-clock time a sandboxed call may take, in ms (at most 30,000, a tool call's
    /// own limit).
    #[arg(long, env = "TANDEM_WASM_TIMEOUT_MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=MAX_WASM_TIMEOUT_MS))]
    pub wasm_timeout_ms: u64,
}
