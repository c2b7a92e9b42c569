//! Share links ([`crate::store::sql::shares`]) on SQLite.

use sqlx::SqlitePool;

crate::store::sql::shares::shares_on!(SqlitePool, super::revocations::announce);
