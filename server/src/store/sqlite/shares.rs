//! Share links and session search on SQLite. Only hashes of link tokens are stored.

use sqlx::SqlitePool;

use super::rows::{session_from, SessionTuple, SESSION_COLUMNS};
use crate::domain::{SessionId, TokenHash, UserId};
use crate::store::{SessionRow, ShareRow, StoreError};

type ShareTuple = (String, String, bool, bool, i64);
const SHARE_COLUMNS: &str = "id, session_id, hide_reasoning, hide_tool_arguments, created_at";

fn share_from(
    (id, session, hide_reasoning, hide_tool_arguments, created_at): ShareTuple,
) -> Result<ShareRow, StoreError> {
    Ok(ShareRow {
        id,
        session: SessionId::parse(&session).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        hide_reasoning,
        hide_tool_arguments,
        created_at,
    })
}

pub(super) async fn create_share(
    pool: &SqlitePool,
    share: &ShareRow,
    token: TokenHash,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO shares (id, session_id, hash, hide_reasoning, hide_tool_arguments, created_at) \
         VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(&share.id)
    .bind(share.session.to_string())
    .bind(&token.as_bytes()[..])
    .bind(share.hide_reasoning)
    .bind(share.hide_tool_arguments)
    .bind(share.created_at)
    .execute(pool)
    .await?;
    Ok(())
}

pub(super) async fn shares(
    pool: &SqlitePool,
    session: SessionId,
) -> Result<Vec<ShareRow>, StoreError> {
    let sql =
        format!("SELECT {SHARE_COLUMNS} FROM shares WHERE session_id = ? ORDER BY created_at, id");
    let rows: Vec<ShareTuple> = sqlx::query_as(&sql)
        .bind(session.to_string())
        .fetch_all(pool)
        .await?;
    rows.into_iter().map(share_from).collect()
}

pub(super) async fn delete_share(
    pool: &SqlitePool,
    session: SessionId,
    id: &str,
) -> Result<bool, StoreError> {
    let done = sqlx::query("DELETE FROM shares WHERE session_id = ? AND id = ?")
        .bind(session.to_string())
        .bind(id)
        .execute(pool)
        .await?;
    Ok(done.rows_affected() > 0)
}

pub(super) async fn share_for_token(
    pool: &SqlitePool,
    token: TokenHash,
) -> Result<Option<(ShareRow, TokenHash)>, StoreError> {
    let sql = format!("SELECT {SHARE_COLUMNS}, hash FROM shares WHERE hash = ?");
    let row: Option<(String, String, bool, bool, i64, Vec<u8>)> = sqlx::query_as(&sql)
        .bind(&token.as_bytes()[..])
        .fetch_optional(pool)
        .await?;
    let Some((id, session, hide_reasoning, hide_tool_arguments, created_at, hash)) = row else {
        return Ok(None);
    };
    let hash = TokenHash::from_bytes(&hash)
        .ok_or_else(|| StoreError::Corrupt("a stored hash is not 32 bytes".into()))?;
    let share = share_from((id, session, hide_reasoning, hide_tool_arguments, created_at))?;
    Ok(Some((share, hash)))
}

/// The owner's sessions whose title, or the text of any message in them, contains `text`
/// (ASCII letters in any case). Messages are streamed in pieces, so each message's text
/// is put back together (in `seq` order) before it is matched.
pub(super) async fn search_sessions(
    pool: &SqlitePool,
    owner: UserId,
    text: &str,
) -> Result<Vec<SessionRow>, StoreError> {
    let pattern = format!("%{}%", escape_like(text));
    let sql = format!(
        "SELECT {SESSION_COLUMNS} FROM sessions WHERE owner_id = ?1 AND ( \
           title LIKE ?2 ESCAPE '\\' OR id IN ( \
             SELECT e.session_id FROM events e JOIN sessions s ON s.id = e.session_id \
             WHERE s.owner_id = ?1 \
               AND json_extract(e.event, '$.type') = 'TEXT_MESSAGE_CONTENT' \
             GROUP BY e.session_id, json_extract(e.event, '$.messageId') \
             HAVING group_concat(json_extract(e.event, '$.delta'), '' ORDER BY e.seq) \
               LIKE ?2 ESCAPE '\\')) \
         ORDER BY updated_at DESC, id DESC"
    );
    let rows: Vec<SessionTuple> = sqlx::query_as(&sql)
        .bind(owner.to_string())
        .bind(pattern)
        .fetch_all(pool)
        .await?;
    rows.into_iter().map(session_from).collect()
}

/// `text` with LIKE's wildcards (and the escape character) taken literally.
fn escape_like(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

pub(super) async fn rename_session(
    pool: &SqlitePool,
    id: SessionId,
    title: &str,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE sessions SET title = ?, auto_title = 0, updated_at = max(updated_at, ?) WHERE id = ?",
    )
    .bind(title)
    .bind(now_ms)
    .bind(id.to_string())
    .execute(pool)
    .await?;
    Ok(done.rows_affected() > 0)
}
