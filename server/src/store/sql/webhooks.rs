//! The webhook outbox in SQL both backends run (`$n` placeholders, `||`, `ON CONFLICT`,
//! `UPDATE … RETURNING`): claims, outcomes, settling, pruning and reads. What is owed is
//! added by [`super::webhook_sources`].

/// Defines the outbox functions for one backend and implements
/// [`crate::store::WebhookOutbox`] with them (the arguments [`super`] describes, with
/// `$conn`: the backend's pool type, `$skip_locked`: what ends the claim's row selection
/// so that concurrent claims skip each other's rows, empty where one writer at a time is
/// all there is). Claims name the keeper's instance.
macro_rules! webhooks_on {
    (
        [$($generics:tt)*] $store:ty, $keeper:path,
        $conn:ty,
        $writes:ident,
        $reads:ident,
        $skip_locked:literal
    ) => {
        impl<$($generics)*> crate::store::WebhookOutbox for $store {
            async fn enqueue_webhooks(
                &self,
                targets: &[crate::store::Target],
                wanted: crate::store::Wanted,
                since_ms: i64,
                now_ms: i64,
            ) -> Result<u64, crate::store::StoreError> {
                let pool = &$keeper(self).$writes;
                let mut added = enqueue_waiting(pool, targets, wanted, since_ms, now_ms).await?;
                added += enqueue_run_ends(pool, targets, wanted, since_ms, now_ms).await?;
                Ok(added)
            }

            async fn claim_webhooks(
                &self,
                now_ms: i64,
                limit: u32,
                hold_until_ms: i64,
            ) -> Result<Vec<crate::store::DeliveryRow>, crate::store::StoreError> {
                let keeper = $keeper(self);
                let instance = &keeper.lease.owner;
                claim_webhooks(&keeper.$writes, instance, now_ms, limit, hold_until_ms).await
            }

            async fn record_webhook(
                &self,
                id: &str,
                attempt: &crate::store::Attempt,
                now_ms: i64,
            ) -> Result<(), crate::store::StoreError> {
                let keeper = $keeper(self);
                record_webhook(&keeper.$writes, &keeper.lease.owner, id, attempt, now_ms).await
            }

            async fn settle_webhooks(
                &self,
                urls: Option<&[String]>,
                now_ms: i64,
            ) -> Result<u64, crate::store::StoreError> {
                settle_webhooks(&$keeper(self).$writes, urls, now_ms).await
            }

            async fn prune_webhooks(&self, before_ms: i64) -> Result<u64, crate::store::StoreError> {
                let done = sqlx::query(
                    "DELETE FROM webhook_deliveries WHERE state IN ('delivered', 'failed', 'superseded', 'cancelled') \
                     AND next_attempt_at < $1",
                )
                .bind(before_ms)
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(done.rows_affected())
            }

            async fn webhooks_of(
                &self,
                session: crate::domain::SessionId,
            ) -> Result<Vec<crate::store::DeliveryRow>, crate::store::StoreError> {
                let sql = format!(
                    "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries \
                     WHERE session_id = $1 ORDER BY created_at, id"
                );
                let pool = &$keeper(self).$reads;
                crate::store::sql::rows_of!(pool, &sql, delivery_from, session.to_string())
            }

            async fn interrupts_waiting(&self) -> Result<u64, crate::store::StoreError> {
                let (count,): (i64,) = sqlx::query_as(
                    "SELECT count(*) FROM interrupts \
                     WHERE status = 'pending' AND coalesce(reason, '') <> 'client_tools'",
                )
                .fetch_one(&$keeper(self).$reads)
                .await?;
                Ok(count.max(0) as u64)
            }
        }

        /// The columns a `DeliveryTuple` reads, in its order.
        const DELIVERY_COLUMNS: &str = "id, event, interrupt_id, session_id, url, state, \
            CAST(attempts AS BIGINT), CAST(last_status AS BIGINT), last_error, next_attempt_at, \
            created_at, delivered_at, payload";

        /// The columns of [`DELIVERY_COLUMNS`]: id, event, interrupt, session, url, state;
        /// attempts, last status, last error; next attempt, created, delivered; payload.
        type DeliveryTuple = (
            String, String, String, String, String, String,
            i64, Option<i64>, Option<String>,
            i64, i64, Option<i64>,
            Option<String>,
        );

        fn delivery_from(
            row: DeliveryTuple,
        ) -> Result<crate::store::DeliveryRow, crate::store::StoreError> {
            Ok(crate::store::DeliveryRow {
                id: row.0,
                event: row.1,
                interrupt_id: row.2,
                session: crate::domain::SessionId::parse(&row.3)
                    .map_err(|e| crate::store::StoreError::Corrupt(e.to_string()))?,
                url: row.4,
                state: row.5,
                attempts: row.6,
                last_status: row.7,
                last_error: row.8,
                next_attempt_at: row.9,
                created_at: row.10,
                delivered_at: row.11,
                payload: row.12,
                interrupt: None,
            })
        }

        /// The claim: the due rows (skipping those another claim holds), each given one
        /// more attempt, this instance and a next attempt after the attempt's time limit.
        async fn claim_webhooks(
            pool: &$conn,
            instance: &str,
            now_ms: i64,
            limit: u32,
            hold_until_ms: i64,
        ) -> Result<Vec<crate::store::DeliveryRow>, crate::store::StoreError> {
            let sql = format!(
                "UPDATE webhook_deliveries SET attempts = attempts + 1, claimed_by = $1, \
                   next_attempt_at = $2 \
                 WHERE id IN (SELECT id FROM webhook_deliveries \
                   WHERE state = 'pending' AND next_attempt_at <= $3 \
                   ORDER BY next_attempt_at, id LIMIT $4 {}) \
                 RETURNING {DELIVERY_COLUMNS}",
                $skip_locked
            );
            let rows: Vec<DeliveryTuple> = sqlx::query_as(&sql)
                .bind(instance)
                .bind(hold_until_ms)
                .bind(now_ms)
                .bind(i64::from(limit))
                .fetch_all(pool)
                .await?;
            let mut claimed = rows
                .into_iter()
                .map(delivery_from)
                .collect::<Result<Vec<_>, _>>()?;
            claimed.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
            for row in claimed.iter_mut().filter(|r| r.event == crate::store::webhooks::WAITING) {
                let interrupt: Option<(String,)> =
                    sqlx::query_as(
                        "SELECT interrupt FROM interrupts WHERE id = $1 AND session_id = $2",
                    )
                    .bind(&row.interrupt_id)
                    .bind(row.session.to_string())
                        .fetch_optional(pool)
                        .await?;
                row.interrupt = interrupt.map(|(json,)| json);
            }
            Ok(claimed)
        }

        async fn record_webhook(
            pool: &$conn,
            instance: &str,
            id: &str,
            attempt: &crate::store::Attempt,
            now_ms: i64,
        ) -> Result<(), crate::store::StoreError> {
            use crate::store::Attempt;
            let (state, status, error, next, delivered) = match attempt {
                Attempt::Delivered { status } => ("delivered", Some(*status), None, now_ms, Some(now_ms)),
                Attempt::Failed { status, error, retry_at: Some(at) } => ("pending", *status, Some(error.as_str()), *at, None),
                Attempt::Failed { status, error, retry_at: None } => ("failed", *status, Some(error.as_str()), now_ms, None),
            };
            sqlx::query(
                "UPDATE webhook_deliveries SET state = $1, last_status = $2, last_error = $3, \
                   next_attempt_at = $4, delivered_at = $5, claimed_by = NULL \
                 WHERE id = $6 AND state = 'pending' AND (claimed_by = $7 OR $1 = 'delivered')",
            )
            .bind(state)
            .bind(status.map(|s| s as i32))
            .bind(error)
            .bind(next)
            .bind(delivered)
            .bind(id)
            .bind(instance)
            .execute(pool)
            .await?;
            Ok(())
        }

        async fn settle_webhooks(
            pool: &$conn,
            urls: Option<&[String]>,
            now_ms: i64,
        ) -> Result<u64, crate::store::StoreError> {
            let superseded = sqlx::query(
                "UPDATE webhook_deliveries SET state = 'superseded', next_attempt_at = $1, \
                   claimed_by = NULL, last_error = 'not sent: the interrupt was settled first' \
                 WHERE state = 'pending' AND event = 'session.waiting' AND NOT EXISTS \
                   (SELECT 1 FROM interrupts i WHERE i.id = webhook_deliveries.interrupt_id \
                      AND i.session_id = webhook_deliveries.session_id AND i.status = 'pending')",
            )
            .bind(now_ms)
            .execute(pool)
            .await?
            .rows_affected();
            let Some(urls) = urls.filter(|urls| !urls.is_empty()) else {
                return Ok(superseded);
            };
            let placeholders: Vec<String> = (0..urls.len()).map(|n| format!("${}", n + 2)).collect();
            let sql = format!(
                "UPDATE webhook_deliveries SET state = 'cancelled', next_attempt_at = $1, \
                   claimed_by = NULL, last_error = 'not sent: its URL is no longer configured' \
                 WHERE state = 'pending' AND url NOT IN ({})",
                placeholders.join(", ")
            );
            let mut query = sqlx::query(&sql).bind(now_ms);
            for url in urls {
                query = query.bind(url);
            }
            Ok(superseded + query.execute(pool).await?.rows_affected())
        }
    };
}

pub(crate) use webhooks_on;
