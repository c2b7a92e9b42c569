//! Attachments ([`crate::store::sql::attachments`]) on SQLite: written through the records'
//! pool (never the log's writer), read through the read-only one.

use sqlx::SqlitePool;

crate::store::sql::attachments::attachments_on!(SqlitePool, super::SqliteStore, pool, reads);
