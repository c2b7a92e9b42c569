//! Users, API tokens and browser sign-ins on SQLite ([`crate::store::sql::users`]).

use sqlx::SqlitePool;

crate::store::sql::users::users_on!(SqlitePool, super::revocations::announce);
