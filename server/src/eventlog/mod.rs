//! The path from producer to viewer: the single group-commit [`Writer`] appends to the
//! [`Store`](crate::store::Store), and only after a commit hands the events to the [`Hub`],
//! which fans them out to live sockets. Nothing reaches a viewer uncommitted.

mod frames;
mod hub;
mod writer;

pub use frames::event_frame;
pub use hub::{Hub, Published, Subscription};
pub use writer::{SessionDone, SessionOp, WriteError, Writer};
