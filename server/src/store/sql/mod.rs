//! SQL that SQLite and PostgreSQL run alike, written once: each module is a macro a
//! backend expands with its own pool or connection type.

pub(crate) mod attachments;
pub(crate) mod budgets;
pub(crate) mod feedback;
pub(crate) mod guards;
pub(crate) mod instructions;
pub(crate) mod interrupts;
pub(crate) mod leases;
pub(crate) mod sessions;
pub(crate) mod shares;
pub(crate) mod users;
pub(crate) mod webhook_sources;
pub(crate) mod webhooks;
