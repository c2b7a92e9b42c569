//! Settings of the WebAssembly sandbox: where an operator's tools are, where compiled
//! modules are kept, and the most a call may use (a tool's manifest may ask for less,
//! never more).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

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
    /// RustPython built for `wasm32-wasip1` (`scripts/setup.sh` builds it into the tools
    /// cache): with it, the model has the `run_python` tool (docs/tools.md).
    #[arg(long, env = "TANDEM_PYTHON_WASM")]
    pub python_wasm: Option<PathBuf>,
    /// What `run_python`'s programs see of the user's workspace, at `/workspace`: `none`,
    /// `read`, or `write` (each call then waits for a person's approval, as `write_file`).
    #[arg(long, env = "TANDEM_PYTHON_FILES", value_enum, default_value = "none")]
    pub python_files: PythonFiles,
    /// Whether people may upload tools of their own (`PUT /api/tools/{name}`): `on` or
    /// `off`.
    #[arg(long, env = "TANDEM_USER_TOOLS", value_enum, default_value = "on")]
    pub user_tools: Toggle,
    /// The largest module a person may upload, in bytes.
    #[arg(long, env = "TANDEM_MAX_TOOL_MODULE_BYTES", default_value_t = DEFAULT_MAX_TOOL_MODULE_BYTES,
          value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    pub max_tool_module_bytes: u64,
}

/// The largest module a person may upload by default: 10 MiB.
pub const DEFAULT_MAX_TOOL_MODULE_BYTES: u64 = 10 << 20;

/// A feature turned on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Toggle {
    On,
    Off,
}

/// What `run_python`'s programs see of the user's workspace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum PythonFiles {
    /// Nothing.
    #[default]
    None,
    /// The workspace, read-only.
    Read,
    /// The workspace, to read and write.
    Write,
}
