//! Fault injection: what the server promises when things go wrong.
//!
//! - [`kills`]: the real binary is SIGKILLed at random moments while sessions stream
//!   (on PostgreSQL, random ones of three instances); nothing a viewer saw is lost or
//!   changed, replays are exact, runs continue exactly once (restarted or taken over)
//!   and non-idempotent tools never run twice.
//!   Queued and steering messages sent during those runs run exactly once, in order.
//! - [`paused`]: a thousand sessions paused on a question survive a restart and each is
//!   answered exactly once.
//! - [`races`]: two answers to one question at the same moment, over sockets and REST;
//!   exactly one wins.
//! - [`zombie`]: an instance frozen past its run lease wakes after another took the run
//!   over; its appends are refused and the run continues exactly once.
//! - [`bad_input`], [`bad_paths`] and [`bad_frames`]: malformed bodies, ids, queries and
//!   frames on every entry point get the documented error, change no log and disturb no
//!   other viewer.
//!
//! The rest are their tools: the bad-input [`fixture`], the recording [`viewer`], the
//! log checks in [`log_checks`], [`tool_checks`] and [`queue_checks`], the kill script in [`kill_script`]
//! and a raw WebSocket client in [`raw_ws`] for frames tungstenite will not send;
//! [`check_tests`] proves the checks catch what they are there for.

mod bad_frames;
mod bad_input;
mod bad_paths;
mod check_tests;
mod fixture;
mod kill_script;
mod kills;
mod lease_holders;
mod log_checks;
mod paused;
mod queue_checks;
mod races;
pub(crate) mod raw_ws;
mod tool_checks;
mod upload_kill;
mod viewer;
mod zombie;
