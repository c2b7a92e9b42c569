//! Reads on PostgreSQL: sessions, the log (as rows or as ready socket frames built in the
//! database), interrupts. None takes a lock; each sees the last committed state.

use shared::api::SessionStatus;
use sqlx::PgPool;

use super::corrupt;
use crate::domain::{SessionId, UserId};
use crate::store::rows::{
    interrupt_from, session_from, InterruptTuple, SessionTuple, INTERRUPT_COLUMNS, SESSION_COLUMNS,
};
use crate::store::{FramePage, InterruptRow, SessionRow, StoreError, StoredEvent};

/// A seq as PostgreSQL's BIGINT.
fn seq(value: u64) -> i64 {
    value.min(i64::MAX as u64) as i64
}

pub(super) async fn list_sessions(
    pool: &PgPool,
    owner: UserId,
) -> Result<Vec<SessionRow>, StoreError> {
    let sql = format!(
        "SELECT {SESSION_COLUMNS} FROM sessions WHERE owner_id = $1 \
         ORDER BY updated_at DESC, id DESC"
    );
    let rows: Vec<SessionTuple> = sqlx::query_as(&sql)
        .bind(owner.to_string())
        .fetch_all(pool)
        .await?;
    rows.into_iter().map(session_from).collect()
}

pub(super) async fn session(
    pool: &PgPool,
    id: SessionId,
) -> Result<Option<SessionRow>, StoreError> {
    let sql = format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = $1");
    let row: Option<SessionTuple> = sqlx::query_as(&sql)
        .bind(id.to_string())
        .fetch_optional(pool)
        .await?;
    row.map(session_from).transpose()
}

pub(super) async fn sessions_with_status(
    pool: &PgPool,
    status: SessionStatus,
) -> Result<Vec<SessionId>, StoreError> {
    let ids: Vec<(String,)> =
        sqlx::query_as("SELECT id FROM sessions WHERE status = $1 ORDER BY updated_at, id")
            .bind(status.as_str())
            .fetch_all(pool)
            .await?;
    ids.into_iter()
        .map(|(id,)| SessionId::parse(&id).map_err(corrupt))
        .collect()
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

pub(super) async fn interrupt(
    pool: &PgPool,
    session: SessionId,
    interrupt_id: &str,
) -> Result<Option<InterruptRow>, StoreError> {
    let sql =
        format!("SELECT {INTERRUPT_COLUMNS} FROM interrupts WHERE id = $1 AND session_id = $2");
    let row: Option<InterruptTuple> = sqlx::query_as(&sql)
        .bind(interrupt_id)
        .bind(session.to_string())
        .fetch_optional(pool)
        .await?;
    row.map(interrupt_from).transpose()
}

pub(super) async fn pending_interrupts(
    pool: &PgPool,
    session: SessionId,
) -> Result<Vec<InterruptRow>, StoreError> {
    let sql = format!(
        "SELECT {INTERRUPT_COLUMNS} FROM interrupts WHERE session_id = $1 AND status = 'pending' \
         ORDER BY created_at, id"
    );
    let rows: Vec<InterruptTuple> = sqlx::query_as(&sql)
        .bind(session.to_string())
        .fetch_all(pool)
        .await?;
    rows.into_iter().map(interrupt_from).collect()
}

/// Pending interrupts whose deadline has passed, earliest first. Every instance's sweeper
/// may read the same ones; the answer's guard lets exactly one expiry through.
pub(super) async fn expired_interrupts(
    pool: &PgPool,
    now_ms: i64,
    limit: u32,
) -> Result<Vec<InterruptRow>, StoreError> {
    let sql = format!(
        "SELECT {INTERRUPT_COLUMNS} FROM interrupts \
         WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= $1 \
         ORDER BY expires_at LIMIT $2"
    );
    let rows: Vec<InterruptTuple> = sqlx::query_as(&sql)
        .bind(now_ms)
        .bind(i64::from(limit))
        .fetch_all(pool)
        .await?;
    rows.into_iter().map(interrupt_from).collect()
}
