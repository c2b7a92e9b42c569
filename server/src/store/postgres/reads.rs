//! Reading the log on PostgreSQL, as rows or as ready socket frames built in the database;
//! a branch's history through its lineage (its ancestors' rows up to where it parts, then
//! its own). No read takes a lock; each sees the last committed state.

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
    let sql = format!(
        "{LINEAGE} SELECT e.seq, e.event FROM line l JOIN events e ON e.session_id = l.id \
         WHERE e.seq > $2 AND (l.upto IS NULL OR e.seq <= l.upto) ORDER BY e.seq LIMIT $3"
    );
    let rows: Vec<(i64, String)> = sqlx::query_as(&sql)
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
    // No ORDER BY in the aggregate: the page is read in seq order and `from_joined` checks
    // it (sorting 1,000 frames per page cost ~20 % of the query).
    let sql = format!(
        "{LINEAGE} SELECT max(seq), string_agg(frame, chr(30)) FROM ( \
           SELECT e.seq, '{{\"kind\":\"event\",\"seq\":' || e.seq || ',\"event\":' || e.event || '}}' AS frame \
           FROM line l JOIN events e ON e.session_id = l.id \
           WHERE e.seq > $2 AND (l.upto IS NULL OR e.seq <= l.upto) ORDER BY e.seq LIMIT $3) AS page"
    );
    let (last, joined): (Option<i64>, Option<String>) = sqlx::query_as(&sql)
        .bind(id.to_string())
        .bind(seq(after))
        .bind(i64::from(limit))
        .fetch_one(pool)
        .await?;
    Ok(FramePage::from_joined(joined, last, after))
}

/// The sessions whose rows hold `$1`'s history (`line`): the session itself (`upto` NULL:
/// all its own rows), then each ancestor with the last seq read from it (its child's fork
/// point, or less if a descendant parts earlier).
const LINEAGE: &str = "WITH RECURSIVE line (id, parent_id, fork_seq, upto) AS ( \
       SELECT id, parent_id, fork_seq, NULL::bigint FROM sessions WHERE id = $1 \
     UNION ALL \
       SELECT s.id, s.parent_id, s.fork_seq, LEAST(l.fork_seq, coalesce(l.upto, l.fork_seq)) \
       FROM sessions s JOIN line l ON s.id = l.parent_id)";
