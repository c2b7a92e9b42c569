//! Budgets ([`crate::store::sql::budgets`]) on SQLite: caps written through the pool for
//! writes outside the log, reads through the read-only pool.

crate::store::sql::budgets::budgets_on!(super::SqliteStore, pool, reads);
