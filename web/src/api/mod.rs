//! Talking to the Tandem server: REST calls ([`rest`]), the per-session WebSocket
//! ([`socket`]) and the live session list ([`list_stream`]); failures are [`ApiError`]s,
//! which mirror the server's JSON error.
//!
//! It owns the wire and nothing about how the page shows what comes over it.

pub mod error;
pub mod list_stream;
pub mod rest;
pub mod socket;
pub mod upload;

pub use error::ApiError;
pub use socket::{ConnState, SessionSocket};
