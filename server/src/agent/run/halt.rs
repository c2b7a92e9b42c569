//! How a run stops short of completing, in words every layer of the run shares: the loop
//! and its phases ([`Halt`]), the person's stop ([`STOP_EVENT`]) and what a stopped call's
//! result says ([`STOPPED`]). A leaf: it imports nothing of the agent.

use crate::agent::engines::EngineError;

/// A persisted stop request for a run (`CUSTOM tandem.stop_requested`).
pub const STOP_EVENT: &str = shared::custom::STOP_REQUESTED;

/// The result of the calls of a run the person stopped, live or found after a crash.
pub const STOPPED: &str = "cancelled by the person before it finished";

/// How a model call or tool phase ended when it did not simply complete.
pub enum Halt {
    Cancelled,
    /// The call failed; `before_output`: before the model produced anything.
    Failed {
        error: EngineError,
        before_output: bool,
    },
    /// The process is stopping: the call is abandoned as a crash would abandon it.
    Stopping,
}
