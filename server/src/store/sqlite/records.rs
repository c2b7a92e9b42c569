//! The stores whose records a SQLite store keeps, which the records' SQL
//! (`store/sql/`) is implemented for on SQLite.

use super::SqliteStore;

/// A store whose records a [`SqliteStore`] keeps: users and their secrets, share links,
/// interrupts and queued messages as read, the webhook outbox, attachments, feedback,
/// budgets, instructions. On SQLite each of those jobs' traits is implemented once, for
/// every such store, on the pools of the store it names: the SQLite store itself, or the
/// one that a store whose log is kept elsewhere (the benchmark's, which keeps nothing)
/// keeps its records in. Session rows are not among them: its log writes them.
pub trait SqliteRecords: Send + Sync + 'static {
    /// The SQLite store that keeps the records.
    fn sqlite_records(&self) -> &SqliteStore;
}

impl SqliteRecords for SqliteStore {
    fn sqlite_records(&self) -> &SqliteStore {
        self
    }
}

// Every record job ([`crate::store::sql::records`]) on SQLite: written through the pool
// for writes outside the log (never the log's writer), read through the read-only one. A
// credential that ends is announced to the sockets that relied on it; each attachment
// write counts as a commit for the checkpointer, so uploads alone still get their WAL
// checkpointed; one writer at a time, so a webhook claim needs no row locks.
crate::store::sql::records::records_on!(
    [T: SqliteRecords] T,
    SqliteRecords::sqlite_records,
    pool,
    reads,
    pool: sqlx::SqlitePool,
    announce: super::revocations::announce,
    wrote: |store: &SqliteStore| store.wal.committed(),
    hold_user: super::HOLD_USER,
    skip_locked: "",
);
