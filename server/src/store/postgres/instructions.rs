//! A person's own instructions ([`crate::store::sql::instructions`]) on PostgreSQL.

crate::store::sql::instructions::instructions_on!(
    [] super::PostgresStore,
    std::convert::identity,
    pool,
    pool
);
