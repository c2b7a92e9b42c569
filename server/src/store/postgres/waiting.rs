//! What waits in sessions, read on PostgreSQL: interrupts for their answer
//! ([`crate::store::sql::interrupt_reads`]), queued messages for their turn
//! ([`crate::store::sql::queue_reads`]).

crate::store::sql::interrupt_reads::interrupt_reads_on!(
    [] super::PostgresStore,
    std::convert::identity,
    pool
);
crate::store::sql::queue_reads::queue_reads_on!(
    [] super::PostgresStore,
    std::convert::identity,
    pool
);
