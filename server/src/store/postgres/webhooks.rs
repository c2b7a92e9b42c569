//! The webhook outbox on PostgreSQL (the SQL and the impl are shared:
//! `store/sql/webhooks.rs`).

use sqlx::PgPool;

use super::PostgresStore;

crate::store::sql::webhooks::webhooks_on!(PgPool, PostgresStore, pool);
