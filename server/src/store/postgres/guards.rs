//! Guards on PostgreSQL ([`crate::store::sql::guards`]); the session row is already
//! locked by the batch.

use sqlx::PgConnection;

crate::store::sql::guards::guards_on!(PgConnection);
