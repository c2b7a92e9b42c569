//! Budgets ([`crate::store::sql::budgets`]) on SQLite: caps written through the pool for
//! writes outside the log, reads through the read-only pool.

crate::store::sql::budgets::budgets_on!(
    [T: super::SqliteRecords] T,
    super::SqliteRecords::sqlite_records,
    pool,
    reads
);
