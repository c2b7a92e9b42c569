//! Attachments ([`crate::store::sql::attachments`]) on PostgreSQL.

use sqlx::PgPool;

crate::store::sql::attachments::attachments_on!(
    [] super::PostgresStore,
    std::convert::identity,
    PgPool,
    pool,
    pool,
    |_| (),
    super::HOLD_USER
);
