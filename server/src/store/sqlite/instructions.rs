//! A person's own instructions ([`crate::store::sql::instructions`]) on SQLite.

crate::store::sql::instructions::instructions_on!(super::SqliteStore, pool, reads);
