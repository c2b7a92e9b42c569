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
                use crate::store::queued::{queued_from, QueuedTuple, QUEUED_COLUMNS};
                let sql = format!(
                    "SELECT {QUEUED_COLUMNS} FROM queued_messages \
                     WHERE session_id = $1 ORDER BY position"
                );
                let rows: Vec<QueuedTuple> = sqlx::query_as(&sql)
                    .bind(session.to_string())
                    .fetch_all(&$keeper(self).$reads)
                    .await?;
                rows.into_iter().map(queued_from).collect()
            }

            async fn idle_with_queue(
                &self,
            ) -> Result<Vec<crate::domain::SessionId>, crate::store::StoreError> {
                let ids: Vec<(String,)> = sqlx::query_as(
                    "SELECT id FROM sessions WHERE status = 'idle' AND NOT deleted \
                       AND EXISTS (SELECT 1 FROM queued_messages q \
                         WHERE q.session_id = sessions.id) \
                     ORDER BY updated_at, id",
                )
                .fetch_all(&$keeper(self).$reads)
                .await?;
                crate::store::rows::session_ids(ids)
            }
        }
    };
}

pub(crate) use queue_reads_on;
