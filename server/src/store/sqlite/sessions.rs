//! Session rows ([`crate::store::sql::sessions`]) on SQLite: read through the read-only
//! pool, each with its exact `last_seq` from the log's tail in memory; renamed and
//! deleted by retention through the pool for writes outside the log, and announced within
//! the process once committed. Search is SQLite's own (`LIKE`, `json_extract`, the log's
//! tail included).

use std::collections::HashMap;

use sqlx::SqlitePool;

use super::housekeeping::delete_idle_before;
use super::SqliteStore;
use crate::domain::{SessionId, UserId};
use crate::store::rows::{session_from, SESSION_COLUMNS};
use crate::store::shares::escape_like;
use crate::store::sql::sessions::{latest_per_session, ONCE_PER_CONVERSATION, ONE_LINE};
use crate::store::{Change, SessionRow, StoreError};

crate::store::sql::sessions::sessions_on!(
    SqliteStore,
    pool,
    reads,
    super::revocations::announce,
    |store: &SqliteStore, changes: Vec<Change>| store.announcer.tell(changes)
);

/// Rows as they stand: each one's exact `last_seq` from the log's tail in memory (the
/// `sessions` row's is exact only once the session's tail rows are folded).
async fn as_they_stand(
    store: &SqliteStore,
    rows: Vec<SessionRow>,
) -> Result<Vec<SessionRow>, StoreError> {
    Ok(rows
        .into_iter()
        .map(|row| store.log.tail.current(row))
        .collect())
}

/// The owner's sessions whose title, or the text of any message in them, contains `text`
/// (ASCII letters in any case). Messages are streamed in pieces, so each message's text
/// is put back together (in `seq` order) before it is matched; the log's tail counts
/// (a row already folded into `events` once).
async fn search_sessions(
    pool: &SqlitePool,
    owner: UserId,
    text: &str,
) -> Result<Vec<SessionRow>, StoreError> {
    let pattern = format!("%{}%", escape_like(text));
    let sql = format!(
        "SELECT {SESSION_COLUMNS} FROM (SELECT *, {ONCE_PER_CONVERSATION} \
         FROM sessions WHERE owner_id = ?1 AND NOT deleted AND ( \
           title LIKE ?2 ESCAPE '\\' OR id IN ( \
             SELECT e.session_id FROM ( \
               SELECT session_id, seq, event FROM events UNION ALL \
               SELECT t.session_id, t.seq, t.event FROM events_tail t WHERE NOT EXISTS ( \
                 SELECT 1 FROM events f WHERE f.session_id = t.session_id AND f.seq = t.seq) \
             ) e JOIN sessions s ON s.id = e.session_id \
             WHERE s.owner_id = ?1 \
               AND json_extract(e.event, '$.type') = 'TEXT_MESSAGE_CONTENT' \
             GROUP BY e.session_id, json_extract(e.event, '$.messageId') \
             HAVING group_concat(json_extract(e.event, '$.delta'), '' ORDER BY e.seq) \
               LIKE ?2 ESCAPE '\\'))) AS found \
         WHERE {ONE_LINE} ORDER BY updated_at DESC, id DESC"
    );
    crate::store::sql::rows_of!(pool, &sql, session_from, owner.to_string(), pattern)
}

/// For each of `found` whose messages contain `text`, the latest such message's text, put
/// back together from its pieces as [`search_sessions`] matches it.
async fn matched_messages(
    pool: &SqlitePool,
    found: &[SessionRow],
    text: &str,
) -> Result<HashMap<SessionId, String>, StoreError> {
    if found.is_empty() {
        return Ok(HashMap::new());
    }
    let ids: Vec<String> = found.iter().map(|row| row.id.to_string()).collect();
    let ids = serde_json::to_string(&ids).expect("ids serialise");
    let pattern = format!("%{}%", escape_like(text));
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT session_id, text FROM ( \
           SELECT e.session_id, max(e.seq) AS last, \
             group_concat(json_extract(e.event, '$.delta'), '' ORDER BY e.seq) AS text \
           FROM ( \
             SELECT session_id, seq, event FROM events UNION ALL \
             SELECT t.session_id, t.seq, t.event FROM events_tail t WHERE NOT EXISTS ( \
               SELECT 1 FROM events f WHERE f.session_id = t.session_id AND f.seq = t.seq) \
           ) e \
           WHERE e.session_id IN (SELECT value FROM json_each(?1)) \
             AND json_extract(e.event, '$.type') = 'TEXT_MESSAGE_CONTENT' \
           GROUP BY e.session_id, json_extract(e.event, '$.messageId') \
           HAVING text LIKE ?2 ESCAPE '\\') \
         ORDER BY last DESC",
    )
    .bind(ids)
    .bind(pattern)
    .fetch_all(pool)
    .await?;
    Ok(latest_per_session(rows))
}
