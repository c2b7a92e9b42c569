//! SQL that SQLite and PostgreSQL run alike, written once. Each job's module is a macro
//! that implements the job's trait for a backend's store with the backend's own pool
//! type: a macro rather than functions generic over sqlx's `Database`, whose executor,
//! encode and decode bounds would spread to every caller. A backend expands the log's
//! jobs in its file of the job (`sqlite/sessions.rs`, `postgres/leases.rs`, …) and every
//! record job at once with [`records::records_on`], in its `records.rs`.
//!
//! The records' macros take the same first arguments:
//! - `$store`: the type the trait is implemented for, generic where a backend implements
//!   it for several: SQLite's `<T: SqliteRecords> T` is every store whose records a SQLite
//!   store keeps (the SQLite store itself, and a store whose log is kept elsewhere);
//! - `$keeper`: the function from `&$store` to the backend's store whose pools (and
//!   instance name) the SQL uses: `std::convert::identity` where that is the store itself;
//! - `$writes`, `$reads`: that store's pool for writes and for reads (the same one on
//!   PostgreSQL; SQLite reads through its read-only connections).

pub(crate) mod attachments;
pub(crate) mod budgets;
pub(crate) mod feedback;
pub(crate) mod guards;
pub(crate) mod instructions;
pub(crate) mod interrupt_reads;
pub(crate) mod interrupts;
pub(crate) mod leases;
pub(crate) mod queue_reads;
pub(crate) mod records;
pub(crate) mod replays;
pub(crate) mod schedules;
pub(crate) mod sessions;
pub(crate) mod shares;
pub(crate) mod user_tools;
pub(crate) mod users;
pub(crate) mod webhook_sources;
pub(crate) mod webhooks;

/// The rows `$sql` selects from `$pool`, with each `$bind` bound in order, each decoded
/// from its tuple by the fallible `$from` (the tuple's type is `$from`'s argument).
macro_rules! rows_of {
    ($pool:expr, $sql:expr, $from:path $(, $bind:expr)* $(,)?) => {{
        let rows: Vec<_> = sqlx::query_as($sql)$(.bind($bind))*.fetch_all($pool).await?;
        rows.into_iter().map($from).collect()
    }};
}

pub(crate) use rows_of;
