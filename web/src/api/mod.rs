//! Talking to the Tandem server: REST calls ([`rest`]) and the per-session WebSocket
//! ([`socket`]), both failing with [`ApiError`], which mirrors the server's JSON error.
//!
//! It owns the wire and nothing about how the page shows what comes over it.

pub mod error;
pub mod rest;
pub mod socket;

pub use error::ApiError;
pub use socket::{ConnState, SessionSocket};
