//! Guards on SQLite ([`crate::store::sql::guards`]).

use sqlx::SqliteConnection;

crate::store::sql::guards::guards_on!(SqliteConnection);
