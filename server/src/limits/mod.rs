//! Per-user limits enforced at the edge of the API: how fast a user may create sessions,
//! send messages and log AG-UI input ([`RateLimits`], GCRA buckets from `governor`), and
//! how many sockets they may hold open ([`SocketCounts`]). Limits on runs live with the
//! runner (`agent::slots`), limits on sizes with the parsers that read them.

mod rate;
mod sockets;

pub use rate::RateLimits;
pub use sockets::{SocketCounts, SocketOwner, SocketSlot};
