//! Reading interrupts, in SQL both backends run: one of a session, those still waiting,
//! those past their deadline. The log's writer records them (`store/sql/interrupts.rs`).

/// Implements [`crate::store::InterruptReads`] for a backend's store (the arguments are
/// those [`super`] describes; only reads, so no pool for writes).
macro_rules! interrupt_reads_on {
    ([$($generics:tt)*] $store:ty, $keeper:path, $reads:ident) => {
        impl<$($generics)*> crate::store::InterruptReads for $store {
            async fn interrupt(
                &self,
                session: crate::domain::SessionId,
                interrupt_id: &str,
            ) -> Result<Option<crate::store::InterruptRow>, crate::store::StoreError> {
                use crate::store::rows::{interrupt_from, InterruptTuple, INTERRUPT_COLUMNS};
                let sql = format!(
                    "SELECT {INTERRUPT_COLUMNS} FROM interrupts WHERE id = $1 AND session_id = $2"
                );
                let row: Option<InterruptTuple> = sqlx::query_as(&sql)
                    .bind(interrupt_id)
                    .bind(session.to_string())
                    .fetch_optional(&$keeper(self).$reads)
                    .await?;
                row.map(interrupt_from).transpose()
            }

            async fn pending_interrupts(
                &self,
                session: crate::domain::SessionId,
            ) -> Result<Vec<crate::store::InterruptRow>, crate::store::StoreError> {
                use crate::store::rows::{interrupt_from, INTERRUPT_COLUMNS};
                let sql = format!(
                    "SELECT {INTERRUPT_COLUMNS} FROM interrupts \
                     WHERE session_id = $1 AND status = 'pending' ORDER BY created_at, id"
                );
                let pool = &$keeper(self).$reads;
                crate::store::sql::rows_of!(pool, &sql, interrupt_from, session.to_string())
            }

            async fn expired_interrupts(
                &self,
                now_ms: i64,
                limit: u32,
            ) -> Result<Vec<crate::store::InterruptRow>, crate::store::StoreError> {
                use crate::store::rows::{interrupt_from, INTERRUPT_COLUMNS};
                let sql = format!(
                    "SELECT {INTERRUPT_COLUMNS} FROM interrupts \
                     WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= $1 \
                     ORDER BY expires_at LIMIT $2"
                );
                crate::store::sql::rows_of!(
                    &$keeper(self).$reads,
                    &sql,
                    interrupt_from,
                    now_ms,
                    i64::from(limit),
                )
            }
        }
    };
}

pub(crate) use interrupt_reads_on;
