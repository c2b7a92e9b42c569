//! Attachments ([`crate::store::sql::attachments`]) on SQLite: written through the records'
//! pool (never the log's writer), read through the read-only one. Each write counts as a
//! commit for the checkpointer, so uploads alone still get their WAL checkpointed.

use sqlx::SqlitePool;

crate::store::sql::attachments::attachments_on!(
    [T: super::SqliteRecords] T,
    super::SqliteRecords::sqlite_records,
    SqlitePool,
    pool,
    reads,
    |store: &super::SqliteStore| store.wal.committed(),
    super::HOLD_USER
);
