//! Reading the log on PostgreSQL, as rows or as ready socket frames built in the database.
//! No read takes a lock; each sees the last committed state.

use sqlx::PgPool;

use crate::domain::SessionId;
use crate::store::{FramePage, StoreError, StoredEvent};

/// A seq as PostgreSQL's BIGINT.
fn seq(value: u64) -> i64 {
    value.min(i64::MAX as u64) as i64
}

pub(super) async fn events_after(
    pool: &PgPool,
    id: SessionId,
    after: u64,
    limit: u32,
) -> Result<Vec<StoredEvent>, StoreError> {
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "SELECT seq, event FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
    )
    .bind(id.to_string())
    .bind(seq(after))
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(seq, json)| StoredEvent {
            seq: seq as u64,
            json,
        })
        .collect())
}

/// A page of frames built by PostgreSQL in one value. The frame text must match
/// [`crate::store::FramePage::frame`] (a test checks it).
pub(super) async fn frames_after(
    pool: &PgPool,
    id: SessionId,
    after: u64,
    limit: u32,
) -> Result<FramePage, StoreError> {
    let (last, joined): (Option<i64>, Option<String>) = sqlx::query_as(
        // No ORDER BY in the aggregate: the page is read in seq order and `from_joined`
        // checks it (sorting 1,000 frames per page cost ~20 % of the query).
        "SELECT max(seq), string_agg(frame, chr(30)) FROM ( \
           SELECT seq, '{\"kind\":\"event\",\"seq\":' || seq || ',\"event\":' || event || '}' AS frame \
           FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3) AS page",
    )
    .bind(id.to_string())
    .bind(seq(after))
    .bind(i64::from(limit))
    .fetch_one(pool)
    .await?;
    Ok(FramePage::from_joined(joined, last, after))
}

