//! Users, API tokens and browser sign-ins on PostgreSQL ([`crate::store::sql::users`]).

use sqlx::PgPool;

crate::store::sql::users::users_on!(PgPool, super::feed::announce);
