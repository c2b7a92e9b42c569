//! Users, API tokens and browser sign-ins ([`crate::store::sql::users`]) on PostgreSQL.

crate::store::sql::users::users_on!(
    [] super::PostgresStore,
    std::convert::identity,
    pool,
    pool,
    super::feed::announce
);
