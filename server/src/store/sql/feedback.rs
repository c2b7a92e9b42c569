//! Reading feedback in SQL both backends run (the rows are written by the log's writer as
//! a guard write, `super::guards::RECORD_FEEDBACK`).

/// Implements [`crate::store::FeedbackReads`] for a backend (the arguments [`super`]
/// describes; only reads, so no pool for writes).
macro_rules! feedback_on {
    ([$($generics:tt)*] $store:ty, $keeper:path, $reads:ident) => {
        impl<$($generics)*> crate::store::FeedbackReads for $store {
            async fn list_feedback(
                &self,
                filter: crate::store::FeedbackFilter,
            ) -> Result<Vec<crate::store::StoredFeedback>, crate::store::StoreError> {
                let rows: Vec<(String, String, String, String, String, Option<String>, i64, i64)> =
                    sqlx::query_as(
                        "SELECT f.session_id, s.title, f.run_id, coalesce(u.name, f.user_id), \
                           f.rating, f.comment, f.created_at, f.updated_at \
                         FROM feedback f JOIN sessions s ON s.id = f.session_id \
                         LEFT JOIN users u ON u.id = f.user_id \
                         WHERE f.updated_at >= $1 AND ($2 = '' OR f.rating = $2) AND NOT s.deleted \
                         ORDER BY f.updated_at DESC, f.session_id, f.run_id LIMIT $3",
                    )
                    .bind(filter.since_ms)
                    .bind(filter.rating.map_or("", |rating| rating.as_str()))
                    .bind(i64::from(filter.limit))
                    .fetch_all(&$keeper(self).$reads)
                    .await?;
                rows.into_iter()
                    .map(|(session, session_title, run_id, user_name, rating, comment, created_at, updated_at)| {
                        let corrupt = |what: String| crate::store::StoreError::Corrupt(what);
                        Ok(crate::store::StoredFeedback {
                            session: crate::domain::SessionId::parse(&session)
                                .map_err(|e| corrupt(e.to_string()))?,
                            session_title,
                            run_id,
                            user_name,
                            rating: shared::feedback::Rating::parse(&rating)
                                .ok_or_else(|| corrupt(format!("a rating `{rating}`")))?,
                            comment,
                            created_at,
                            updated_at,
                        })
                    })
                    .collect()
            }

            async fn feedback_counts(&self) -> Result<(u64, u64), crate::store::StoreError> {
                let (up, down): (i64, i64) = sqlx::query_as(
                    "SELECT coalesce(sum(CASE WHEN rating = 'up' THEN 1 ELSE 0 END), 0), \
                       coalesce(sum(CASE WHEN rating = 'down' THEN 1 ELSE 0 END), 0) FROM feedback",
                )
                .fetch_one(&$keeper(self).$reads)
                .await?;
                Ok((up.max(0) as u64, down.max(0) as u64))
            }
        }
    };
}

pub(crate) use feedback_on;
