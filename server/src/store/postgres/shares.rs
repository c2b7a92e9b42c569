//! Share links ([`crate::store::sql::shares`]) on PostgreSQL.

crate::store::sql::shares::shares_on!(
    [] super::PostgresStore,
    std::convert::identity,
    pool,
    pool,
    super::feed::announce
);
