//! One run, from its first model call to its terminal event: the loop (`run_loop`), what
//! it needs before it starts (`run_setup`), the model's view for each call (`view`), the
//! tool phase with its approval gate and a client's own tools (`tool_phase`, `approval`,
//! `client_tools`), a replay trial's calls met with the record (`replayed`), steering messages joining it (`steering`), what it has opened
//! (`open_items`), how it stops short (`halt`), and its pen, the recorder (`recorder`).
//! Arrows run loop → recorder: nothing here reaches the runner above it.

pub(super) mod approval;
pub(super) mod client_tools;
pub(super) mod halt;
pub(super) mod open_items;
pub(super) mod recorder;
pub(crate) mod replayed;
pub(super) mod run_loop;
pub(super) mod run_setup;
pub(super) mod steering;
pub(super) mod tool_phase;
pub(super) mod view;
