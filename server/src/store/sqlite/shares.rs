//! Share links ([`crate::store::sql::shares`]) on SQLite: written through the pool for
//! writes outside the log, read through the read-only one.

crate::store::sql::shares::shares_on!(
    [T: super::SqliteRecords] T,
    super::SqliteRecords::sqlite_records,
    pool,
    reads,
    super::revocations::announce
);
