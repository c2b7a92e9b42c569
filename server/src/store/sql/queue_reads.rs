//! Reading queued messages, in SQL both backends run: a session's, and the idle sessions
//! that hold some. The log's writer adds, takes and withdraws them (`store/sql/guards.rs`).

/// Implements [`crate::store::QueueReads`] for a backend's store (the arguments are those
/// [`super`] describes; only reads, so no pool for writes).
macro_rules! queue_reads_on {
    ([$($generics:tt)*] $store:ty, $keeper:path, $reads:ident) => {
        impl<$($generics)*> crate::store::QueueReads for $store {
            async fn queued_messages(
                &self,
                session: crate::domain::SessionId,
            ) -> Result<Vec<crate::store::QueuedRow>, crate::store::StoreError> {
                use crate::store::queued::{queued_from, QUEUED_COLUMNS};
                let sql = format!(
                    "SELECT {QUEUED_COLUMNS} FROM queued_messages \
                     WHERE session_id = $1 ORDER BY position"
                );
                let pool = &$keeper(self).$reads;
                crate::store::sql::rows_of!(pool, &sql, queued_from, session.to_string())
            }

            async fn idle_with_queue(
                &self,
            ) -> Result<Vec<crate::domain::SessionId>, crate::store::StoreError> {
                crate::store::sql::rows_of!(
                    &$keeper(self).$reads,
                    "SELECT id FROM sessions WHERE status = 'idle' AND NOT deleted \
                       AND EXISTS (SELECT 1 FROM queued_messages q \
                         WHERE q.session_id = sessions.id) \
                     ORDER BY updated_at, id",
                    crate::store::rows::session_id_of,
                )
            }
        }
    };
}

pub(crate) use queue_reads_on;
