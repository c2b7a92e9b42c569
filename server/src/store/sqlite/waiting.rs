//! What waits in sessions, read on SQLite through the read-only pool: interrupts for their
//! answer ([`crate::store::sql::interrupt_reads`]), queued messages for their turn
//! ([`crate::store::sql::queue_reads`]).

crate::store::sql::interrupt_reads::interrupt_reads_on!(
    [T: super::SqliteRecords] T,
    super::SqliteRecords::sqlite_records,
    reads
);
crate::store::sql::queue_reads::queue_reads_on!(
    [T: super::SqliteRecords] T,
    super::SqliteRecords::sqlite_records,
    reads
);
