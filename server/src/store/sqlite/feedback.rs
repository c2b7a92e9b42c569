//! Feedback reads ([`crate::store::sql::feedback`]) on SQLite, through the read-only pool.

crate::store::sql::feedback::feedback_on!(
    [T: super::SqliteRecords] T,
    super::SqliteRecords::sqlite_records,
    reads
);
