//! Each signed-in page's session list, live: `GET /api/sessions/stream` sends the
//! caller's list, then every change of it as it commits (a session created, renamed,
//! deleted, a run starting, pausing for a person, ending), on any instance.
//!
//! The store announces which session's listed row changed ([`crate::store::Change`]:
//! `Listed` and `Deleted`; through `NOTIFY` on PostgreSQL, within the process on SQLite).
//! The relay hands those to [`ListWatchers`], the instance's registry of open lists,
//! which tells the owner's streams; each [`ListStream`] then reads the row itself, so
//! what it sends is never older than its snapshot. When changes may have been missed (the
//! feed dropped, a stream fell behind) every stream sends a fresh snapshot.

mod stream;
mod watchers;

pub use stream::{summary, ListStream};
pub use watchers::{ListNotice, ListWatch, ListWatchers};
