//! The webhook outbox on SQLite (the SQL and the impl are shared: `store/sql/webhooks.rs`,
//! `store/sql/webhook_sources.rs`); reads use the read-only pool. One writer at a time,
//! so a claim needs no row locks.

use sqlx::SqlitePool;

crate::store::sql::webhook_sources::webhook_sources_on!(SqlitePool);
crate::store::sql::webhooks::webhooks_on!(
    [T: super::SqliteRecords] T,
    super::SqliteRecords::sqlite_records,
    SqlitePool,
    pool,
    reads,
    ""
);
