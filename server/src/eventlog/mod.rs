//! The path from producer to viewer: the single group-commit [`Writer`] appends to the
//! [`Store`](crate::store::Store), and only after a commit hands the events to the [`Hub`],
//! which fans them out to live sockets. Nothing reaches a viewer uncommitted. When
//! several instances share the database, the [`relay`](crate::relay) brings the hub what
//! the others commit.

mod coalesce;
mod commits;
mod hub;
mod streams;
mod writer;

pub use hub::{Hub, Published, QueueWatch, Subscription};
pub use streams::{InFlight, StreamId, WriteError};
pub use writer::{SessionDone, SessionOp, Writer, MAX_BATCH};
