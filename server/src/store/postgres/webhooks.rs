//! The webhook outbox on PostgreSQL (the SQL and the impl are shared:
//! `store/sql/webhooks.rs`, `store/sql/webhook_sources.rs`). Instances claim due
//! deliveries with `FOR UPDATE SKIP LOCKED`, so two never claim the same row.

use sqlx::PgPool;

crate::store::sql::webhook_sources::webhook_sources_on!(PgPool);
crate::store::sql::webhooks::webhooks_on!(
    [] super::PostgresStore,
    std::convert::identity,
    PgPool,
    pool,
    pool,
    "FOR UPDATE SKIP LOCKED"
);
