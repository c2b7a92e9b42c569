//! The webhook outbox on SQLite (the SQL is shared: `store/sql/webhooks.rs`).

use sqlx::SqlitePool;

use super::SqliteStore;
use crate::domain::SessionId;
use crate::store::{Attempt, DeliveryRow, StoreError, Target, WebhookOutbox};

crate::store::sql::webhooks::webhooks_on!(SqlitePool);

impl WebhookOutbox for SqliteStore {
    async fn enqueue_webhooks(
        &self,
        targets: &[Target],
        since_ms: i64,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        enqueue_webhooks(&self.pool, targets, since_ms, now_ms).await
    }

    async fn due_webhooks(&self, now_ms: i64, limit: u32) -> Result<Vec<DeliveryRow>, StoreError> {
        due_webhooks(&self.reads, now_ms, limit).await
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
        webhooks_of(&self.reads, session).await
    }
}
