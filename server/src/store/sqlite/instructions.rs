//! A person's own instructions ([`crate::store::sql::instructions`]) on SQLite.

crate::store::sql::instructions::instructions_on!(
    [T: super::SqliteRecords] T,
    super::SqliteRecords::sqlite_records,
    pool,
    reads
);
