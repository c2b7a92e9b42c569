//! The agent: engines, tools, and the loop that records a run into the log.
//!
//! [`Runner`] is the only way in: it starts runs for messages and answers, stops them,
//! and closes runs a crash left open. A running loop is a task owned by the runner's
//! registry; a paused session has no task at all, only rows.

mod answers;
mod approval;
pub mod conversation;
pub mod engines;
mod expiry;
mod open_items;
mod recorder;
mod recovery;
mod run_loop;
mod runner;
mod tool_phase;
pub mod tools;

use std::sync::Arc;

pub use open_items::OpenItems;
pub use runner::{Runner, MAX_MESSAGE_BYTES};

use crate::eventlog::Writer;

/// What every run needs, shared by all runs.
pub struct RunDeps<S> {
    pub store: Arc<S>,
    pub writer: Writer,
    pub engine: Arc<dyn engines::Engine>,
    pub tools: Arc<tools::ToolRegistry>,
    /// Model calls one run may make before it fails with `max_model_calls`.
    pub max_model_calls: u32,
    /// Deadline for answers to interrupts that set none, in seconds.
    pub input_timeout_secs: Option<u64>,
    /// The runtime runs are spawned on (not an HTTP worker's).
    pub runtime: tokio::runtime::Handle,
}
