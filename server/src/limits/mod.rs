//! Per-user limits enforced at the edge of the API: how fast a user may create sessions,
//! send messages, create share links and log AG-UI input ([`RateLimits`], GCRA buckets
//! from `governor`), and how many sockets they and their share links' viewers may hold
//! open ([`SocketCounts`]). Limits on runs live with the runner (`agent::slots`), limits
//! on sizes with the parsers that read them.

mod rate;
mod sockets;

pub use rate::{PerMinute, RateLimits};
pub use sockets::{SocketCounts, SocketLimits, SocketOwner, SocketSlot};
