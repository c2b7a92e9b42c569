//! What the webhook outbox owes, in SQL both backends run: a delivery per URL for each
//! interrupt waiting (from `interrupts`) and each run that ended (from `run_ends`), both
//! written in the transaction of the event they announce.

/// Defines `enqueue_waiting` and `enqueue_run_ends` for one backend (`$conn`: its pool
/// type); [`super::webhooks::webhooks_on`] calls them.
macro_rules! webhook_sources_on {
    ($conn:ty) => {
        /// Run ends looked at per round at most (the rest wait for the next).
        const RUN_ENDS_PER_ROUND: i64 = 256;

        /// A delivery for each pending interrupt `wanted` covers and each target.
        async fn enqueue_waiting(
            pool: &$conn,
            targets: &[crate::store::Target],
            wanted: crate::store::Wanted,
            since_ms: i64,
            now_ms: i64,
        ) -> Result<u64, crate::store::StoreError> {
            let reasons = match (wanted.waiting, wanted.client_tools) {
                (false, false) => return Ok(0),
                (true, true) => "",
                (true, false) => "AND coalesce(i.reason, '') <> 'client_tools'",
                (false, true) => "AND i.reason = 'client_tools'",
            };
            let sql = format!(
                "INSERT INTO webhook_deliveries \
                   (id, interrupt_id, session_id, url, next_attempt_at, created_at) \
                 SELECT CASE WHEN s.root_id IS NULL THEN i.id \
                     ELSE i.session_id || ':' || i.id END || '@' || $1, \
                   i.id, i.session_id, $2, $3, $3 \
                 FROM interrupts i JOIN sessions s ON s.id = i.session_id \
                 WHERE i.status = 'pending' AND i.created_at >= $4 {reasons} \
                 ON CONFLICT (id) DO NOTHING"
            );
            let mut added = 0;
            for target in targets {
                let done = sqlx::query(&sql)
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

        /// A delivery for each recorded run end and each target (when run ends are
        /// wanted and the end is recent enough), then the run end is forgotten. The
        /// deliveries are added before the run end goes, so a crash in between repeats
        /// the insert, which adds nothing the second time.
        async fn enqueue_run_ends(
            pool: &$conn,
            targets: &[crate::store::Target],
            wanted: crate::store::Wanted,
            since_ms: i64,
            now_ms: i64,
        ) -> Result<u64, crate::store::StoreError> {
            if !wanted.run_ends && !wanted.feedback {
                sqlx::query("DELETE FROM run_ends").execute(pool).await?;
                return Ok(0);
            }
            let ends: Vec<(String, String, Option<String>, String, Option<String>, i64)> =
                sqlx::query_as(
                    "SELECT id, session_id, run_id, outcome, error, created_at FROM run_ends \
                     ORDER BY created_at, id LIMIT $1",
                )
                .bind(RUN_ENDS_PER_ROUND)
                .fetch_all(pool)
                .await?;
            let mut added = 0;
            for (id, session, run_id, outcome, error, created_at) in ends {
                // A rating owes its webhook as a run end of outcome `feedback` whose
                // `error` holds the rating (`store/sql/guards.rs`).
                let rating = outcome == "feedback";
                let wanted_here = if rating { wanted.feedback } else { wanted.run_ends };
                if created_at >= since_ms && wanted_here {
                    let error: Option<serde_json::Value> =
                        error.as_deref().and_then(|e| serde_json::from_str(e).ok());
                    let (event, payload) = match (rating, error) {
                        (true, Some(mut note)) => {
                            note["runId"] = serde_json::json!(run_id);
                            if note["comment"].is_null() {
                                note.as_object_mut().map(|note| note.remove("comment"));
                            }
                            (crate::store::webhooks::FEEDBACK, note)
                        }
                        (true, None) => {
                            (crate::store::webhooks::FEEDBACK, serde_json::json!({"runId": run_id}))
                        }
                        (false, error) => {
                            let mut payload =
                                serde_json::json!({"runId": run_id, "outcome": outcome});
                            if let Some(error) = error {
                                payload["error"] = error;
                            }
                            (crate::store::webhooks::RUN_ENDED, payload)
                        }
                    };
                    for target in targets {
                        let done = sqlx::query(
                            "INSERT INTO webhook_deliveries (id, event, interrupt_id, session_id, \
                               url, payload, next_attempt_at, created_at) \
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (id) DO NOTHING",
                        )
                        .bind(format!("{id}@{}", target.key))
                        .bind(event)
                        .bind(&id)
                        .bind(&session)
                        .bind(&target.url)
                        .bind(payload.to_string())
                        .bind(now_ms)
                        .execute(pool)
                        .await?;
                        added += done.rows_affected();
                    }
                }
                sqlx::query("DELETE FROM run_ends WHERE id = $1")
                    .bind(&id)
                    .execute(pool)
                    .await?;
            }
            Ok(added)
        }
    };
}

pub(crate) use webhook_sources_on;
