//! Users, API tokens and browser sign-ins ([`crate::store::sql::users`]) on SQLite: written
//! through the pool for writes outside the log, read through the read-only one.

crate::store::sql::users::users_on!(
    [T: super::SqliteRecords] T,
    super::SqliteRecords::sqlite_records,
    pool,
    reads,
    super::revocations::announce
);
