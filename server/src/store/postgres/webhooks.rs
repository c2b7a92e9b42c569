//! The webhook outbox on PostgreSQL (the SQL is shared: `store/sql/webhooks.rs`).

use sqlx::PgPool;

use super::PostgresStore;
use crate::domain::SessionId;
use crate::store::{Attempt, DeliveryRow, StoreError, Target, WebhookOutbox};

crate::store::sql::webhooks::webhooks_on!(PgPool);

impl WebhookOutbox for PostgresStore {
    async fn enqueue_webhooks(
        &self,
        targets: &[Target],
        since_ms: i64,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        enqueue_webhooks(&self.pool, targets, since_ms, now_ms).await
    }

    async fn due_webhooks(&self, now_ms: i64, limit: u32) -> Result<Vec<DeliveryRow>, StoreError> {
        due_webhooks(&self.pool, now_ms, limit).await
    }

    async fn record_webhook(
        &self,
        id: &str,
        attempt: &Attempt,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        record_webhook(&self.pool, id, attempt, now_ms).await
    }

    async fn webhooks_of(&self, session: SessionId) -> Result<Vec<DeliveryRow>, StoreError> {
        webhooks_of(&self.pool, session).await
    }
}
