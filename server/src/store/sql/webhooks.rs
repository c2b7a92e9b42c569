//! The webhook outbox in SQL both backends run (`$n` placeholders, `||`, `ON CONFLICT`).

/// Defines the outbox functions for one backend and implements
/// [`crate::store::WebhookOutbox`] for its store with them (`$conn`: its pool type,
/// `$store`: the store, `$reads`: the store's pool for reads).
macro_rules! webhooks_on {
    ($conn:ty, $store:ty, $reads:ident) => {
        impl crate::store::WebhookOutbox for $store {
            async fn enqueue_webhooks(
                &self,
                targets: &[crate::store::Target],
                since_ms: i64,
                now_ms: i64,
            ) -> Result<u64, crate::store::StoreError> {
                enqueue_webhooks(&self.pool, targets, since_ms, now_ms).await
            }

            async fn due_webhooks(
                &self,
                now_ms: i64,
                limit: u32,
            ) -> Result<Vec<crate::store::DeliveryRow>, crate::store::StoreError> {
                due_webhooks(&self.$reads, now_ms, limit).await
            }

            async fn record_webhook(
                &self,
                id: &str,
                attempt: &crate::store::Attempt,
                now_ms: i64,
            ) -> Result<(), crate::store::StoreError> {
                record_webhook(&self.pool, id, attempt, now_ms).await
            }

            async fn webhooks_of(
                &self,
                session: crate::domain::SessionId,
            ) -> Result<Vec<crate::store::DeliveryRow>, crate::store::StoreError> {
                webhooks_of(&self.$reads, session).await
            }
        }

        type DeliveryTuple = (
            String,
            String,
            String,
            String,
            String,
            i64,
            Option<i64>,
            Option<String>,
            i64,
            i64,
            Option<i64>,
            Option<String>,
        );
        const DELIVERY_COLUMNS: &str = "d.id, d.interrupt_id, d.session_id, d.url, d.state, \
            CAST(d.attempts AS BIGINT), CAST(d.last_status AS BIGINT), d.last_error, \
            d.next_attempt_at, d.created_at, d.delivered_at";

        fn delivery_from(row: DeliveryTuple) -> Result<crate::store::DeliveryRow, crate::store::StoreError> {
            let (id, interrupt_id, session, url, state, attempts, last_status, last_error, next_attempt_at, created_at, delivered_at, interrupt) = row;
            Ok(crate::store::DeliveryRow {
                id,
                interrupt_id,
                session: crate::domain::SessionId::parse(&session)
                    .map_err(|e| crate::store::StoreError::Corrupt(e.to_string()))?,
                url,
                state,
                attempts,
                last_status,
                last_error,
                next_attempt_at,
                created_at,
                delivered_at,
                interrupt,
            })
        }

        pub(super) async fn enqueue_webhooks(
            pool: &$conn,
            targets: &[crate::store::Target],
            since_ms: i64,
            now_ms: i64,
        ) -> Result<u64, crate::store::StoreError> {
            let mut added = 0;
            for target in targets {
                let done = sqlx::query(
                    "INSERT INTO webhook_deliveries (id, interrupt_id, session_id, url, next_attempt_at, created_at) \
                     SELECT i.id || '@' || $1, i.id, i.session_id, $2, $3, $3 FROM interrupts i \
                     WHERE i.status = 'pending' AND i.created_at >= $4 \
                     ON CONFLICT (id) DO NOTHING",
                )
                .bind(&target.key)
                .bind(&target.url)
                .bind(now_ms)
                .bind(since_ms)
                .execute(pool)
                .await?;
                added += done.rows_affected();
            }
            Ok(added)
        }

        pub(super) async fn due_webhooks(
            pool: &$conn,
            now_ms: i64,
            limit: u32,
        ) -> Result<Vec<crate::store::DeliveryRow>, crate::store::StoreError> {
            let sql = format!(
                "SELECT {DELIVERY_COLUMNS}, i.interrupt FROM webhook_deliveries d \
                 LEFT JOIN interrupts i ON i.id = d.interrupt_id \
                 WHERE d.state = 'pending' AND d.next_attempt_at <= $1 \
                 ORDER BY d.next_attempt_at, d.id LIMIT $2"
            );
            let rows: Vec<DeliveryTuple> = sqlx::query_as(&sql)
                .bind(now_ms)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await?;
            rows.into_iter().map(delivery_from).collect()
        }

        pub(super) async fn record_webhook(
            pool: &$conn,
            id: &str,
            attempt: &crate::store::Attempt,
            now_ms: i64,
        ) -> Result<(), crate::store::StoreError> {
            let (state, status, error, next, delivered) = match attempt {
                crate::store::Attempt::Delivered { status } => ("delivered", Some(*status), None, now_ms, Some(now_ms)),
                crate::store::Attempt::Failed { status, error, retry_at: Some(at) } => ("pending", *status, Some(error.as_str()), *at, None),
                crate::store::Attempt::Failed { status, error, retry_at: None } => ("failed", *status, Some(error.as_str()), now_ms, None),
            };
            sqlx::query(
                "UPDATE webhook_deliveries SET state = $1, attempts = attempts + 1, last_status = $2, \
                 last_error = $3, next_attempt_at = $4, delivered_at = $5 WHERE id = $6 AND state = 'pending'",
            )
            .bind(state)
            .bind(status.map(|s| s as i32))
            .bind(error)
            .bind(next)
            .bind(delivered)
            .bind(id)
            .execute(pool)
            .await?;
            Ok(())
        }

        pub(super) async fn webhooks_of(
            pool: &$conn,
            session: crate::domain::SessionId,
        ) -> Result<Vec<crate::store::DeliveryRow>, crate::store::StoreError> {
            let sql = format!(
                "SELECT {DELIVERY_COLUMNS}, CAST(NULL AS TEXT) FROM webhook_deliveries d \
                 WHERE d.session_id = $1 ORDER BY d.created_at, d.id"
            );
            let rows: Vec<DeliveryTuple> = sqlx::query_as(&sql)
                .bind(session.to_string())
                .fetch_all(pool)
                .await?;
            rows.into_iter().map(delivery_from).collect()
        }
    };
}

pub(crate) use webhooks_on;
