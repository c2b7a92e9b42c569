//! Budgets ([`crate::store::sql::budgets`]) on PostgreSQL.

crate::store::sql::budgets::budgets_on!(
    [] super::PostgresStore,
    std::convert::identity,
    pool,
    pool
);
