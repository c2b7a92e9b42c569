//! Share links ([`crate::store::sql::shares`]) on PostgreSQL.

use sqlx::PgPool;

crate::store::sql::shares::shares_on!(PgPool, super::feed::announce);
