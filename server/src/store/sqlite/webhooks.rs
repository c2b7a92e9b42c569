//! The webhook outbox on SQLite (the SQL and the impl are shared: `store/sql/webhooks.rs`);
//! reads use the read-only pool.

use sqlx::SqlitePool;

use super::SqliteStore;

crate::store::sql::webhooks::webhooks_on!(SqlitePool, SqliteStore, reads);
