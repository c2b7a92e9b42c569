//! Tools in a WebAssembly sandbox: modules an operator puts in a folder, run in-process
//! under Wasmtime with WASI preview 1, each call in a store of its own with fuel, memory
//! and time limits, no network, no environment, and nothing of the host but what its
//! manifest grants (the calling user's workspace, at most). See `docs/tools.md` for the
//! ABI and `docs/security.md` for the threats.
//!
//! [`Sandbox`] holds the engine and runs calls off the async workers; [`program`] checks
//! and compiles a module (cached by its hash); [`call`] runs one call; [`WasmTool`] is a
//! module as a tool of the registry; [`folder`] loads an operator's tools; a call's
//! store state is `state.rs`; [`RunPython`] is the `run_python` tool, Python run by an
//! interpreter compiled to WebAssembly; [`UserToolbox`] keeps people's own tools.

pub mod call;
mod engine;
pub mod files;
pub mod folder;
pub mod limits;
pub mod manifest;
pub mod program;
pub mod python;
mod state;
mod tool;
pub mod user_tools;

pub use engine::{Sandbox, Turn, MAX_CONCURRENT_CALLS, TICK};
pub use limits::{Limit, Limits};
pub use manifest::Manifest;
pub use program::{Program, ProgramError};
pub use python::RunPython;
pub use tool::{result_of, WasmTool};
pub use user_tools::UserToolbox;
