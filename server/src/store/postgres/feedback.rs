//! Feedback reads ([`crate::store::sql::feedback`]) on PostgreSQL.

crate::store::sql::feedback::feedback_on!([] super::PostgresStore, std::convert::identity, pool);
