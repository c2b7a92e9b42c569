//! Session rows ([`crate::store::sql::sessions`]) on PostgreSQL, each with its exact
//! `last_seq` from the log's key; search is PostgreSQL's own (`ILIKE`, `->>`). Every
//! change is announced inside the transaction that makes it.

use std::collections::HashMap;

use sqlx::PgPool;

use super::apply::delete_idle_before;
use super::PostgresStore;
use crate::domain::{SessionId, UserId};
use crate::store::rows::{session_from, SESSION_COLUMNS};
use crate::store::shares::escape_like;
use crate::store::sql::sessions::{latest_per_session, ONCE_PER_CONVERSATION, ONE_LINE};
use crate::store::{Change, SessionRow, StoreError};

crate::store::sql::sessions::sessions_on!(
    PostgresStore,
    pool,
    pool,
    super::feed::announce,
    |_: &PostgresStore, _: Vec<Change>| ()
);

/// The owner's sessions whose title, or the text of any message in them, contains `text`
/// (letters in any case). Messages are streamed in pieces, so each message's text
/// is put back together (in `seq` order) before it is matched.
async fn search_sessions(
    pool: &PgPool,
    owner: UserId,
    text: &str,
) -> Result<Vec<SessionRow>, StoreError> {
    let pattern = format!("%{}%", escape_like(text));
    let sql = format!(
        "SELECT {SESSION_COLUMNS} FROM (SELECT *, {ONCE_PER_CONVERSATION} \
         FROM sessions WHERE owner_id = $1 AND NOT deleted AND ( \
           title ILIKE $2 ESCAPE '\\' OR id IN ( \
             SELECT e.session_id FROM events e JOIN sessions s ON s.id = e.session_id \
             WHERE s.owner_id = $1 \
               AND e.event::json->>'type' = 'TEXT_MESSAGE_CONTENT' \
             GROUP BY e.session_id, e.event::json->>'messageId' \
             HAVING string_agg(e.event::json->>'delta', '' ORDER BY e.seq) \
               ILIKE $2 ESCAPE '\\'))) AS found \
         WHERE {ONE_LINE} ORDER BY updated_at DESC, id DESC"
    );
    crate::store::sql::rows_of!(pool, &sql, session_from, owner.to_string(), pattern)
}

/// For each of `found` whose messages contain `text`, the latest such message's text, put
/// back together from its pieces as [`search_sessions`] matches it.
async fn matched_messages(
    pool: &PgPool,
    found: &[SessionRow],
    text: &str,
) -> Result<HashMap<SessionId, String>, StoreError> {
    if found.is_empty() {
        return Ok(HashMap::new());
    }
    let ids: Vec<String> = found.iter().map(|row| row.id.to_string()).collect();
    let pattern = format!("%{}%", escape_like(text));
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT session_id, text FROM ( \
           SELECT e.session_id, max(e.seq) AS last, \
             string_agg(e.event::json->>'delta', '' ORDER BY e.seq) AS text \
           FROM events e \
           WHERE e.session_id = ANY($1) \
             AND e.event::json->>'type' = 'TEXT_MESSAGE_CONTENT' \
           GROUP BY e.session_id, e.event::json->>'messageId' \
           HAVING string_agg(e.event::json->>'delta', '' ORDER BY e.seq) ILIKE $2 ESCAPE '\\' \
         ) AS matched ORDER BY last DESC",
    )
    .bind(&ids)
    .bind(pattern)
    .fetch_all(pool)
    .await?;
    Ok(latest_per_session(rows))
}

/// Rows as they stand: each one's `last_seq` from the log's key where the log is further
/// on. A run's tokens go in as bare inserts after the heads its writer knows
/// ([`super::heads`]) and leave `last_seq` behind until the session's next locked write.
async fn as_they_stand(
    store: &PostgresStore,
    mut rows: Vec<SessionRow>,
) -> Result<Vec<SessionRow>, StoreError> {
    if rows.is_empty() {
        return Ok(rows);
    }
    let ids: Vec<String> = rows.iter().map(|row| row.id.to_string()).collect();
    let heads: Vec<Option<i64>> = sqlx::query_scalar(
        "SELECT (SELECT max(seq) FROM events WHERE session_id = v.id) \
         FROM UNNEST($1::text[]) WITH ORDINALITY AS v(id, place) ORDER BY place",
    )
    .bind(&ids)
    .fetch_all(&store.pool)
    .await?;
    for (row, head) in rows.iter_mut().zip(heads) {
        if let Some(head) = head {
            row.last_seq = row.last_seq.max(head as u64);
        }
    }
    Ok(rows)
}
