//! Attachments ([`crate::store::sql::attachments`]) on PostgreSQL.

use sqlx::PgPool;

crate::store::sql::attachments::attachments_on!(
    PgPool,
    super::PostgresStore,
    pool,
    pool,
    |_| (),
    super::HOLD_USER
);
