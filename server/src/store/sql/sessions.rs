//! The session list and its rows, renames, and interrupt reads, in SQL both backends run
//! (`$1` placeholders, `TRUE`/`FALSE`, `CASE` where one would write `max` on SQLite and
//! `greatest` on PostgreSQL). Search is the one read of the list that differs (text
//! matching and JSON functions are each dialect's own, and SQLite also reads its log's
//! tail), so each backend has its own (`sqlite/shares.rs`, `postgres/shares.rs`).

/// Defines this module's functions for one backend: `$conn` is its pool type (the one it
/// reads with), `$announce` tells the other processes sharing the database of a change
/// inside the transaction that makes it; see [`super::users`] for why a macro. A backend
/// whose rows need more (SQLite's exact `last_seq` from its log's tail) adds it to what
/// these return.
macro_rules! sessions_on {
    ($conn:ty, $announce:path) => {
        /// The owner's conversations, each once (its most recently updated line), most
        /// recently updated first.
        pub(super) async fn list_sessions(
            pool: &$conn,
            owner: crate::domain::UserId,
        ) -> Result<Vec<crate::store::SessionRow>, crate::store::StoreError> {
            use crate::store::rows::{session_from, SessionTuple, SESSION_COLUMNS};
            use crate::store::sql::sessions::{ONCE_PER_CONVERSATION, ONE_LINE};
            let sql = format!(
                "SELECT {SESSION_COLUMNS} FROM (SELECT *, {ONCE_PER_CONVERSATION} \
                   FROM sessions WHERE owner_id = $1 AND NOT deleted) AS listed \
                 WHERE {ONE_LINE} ORDER BY updated_at DESC, id DESC"
            );
            let rows: Vec<SessionTuple> = sqlx::query_as(&sql)
                .bind(owner.to_string())
                .fetch_all(pool)
                .await?;
            rows.into_iter().map(session_from).collect()
        }

        /// One session's row.
        pub(super) async fn session(
            pool: &$conn,
            id: crate::domain::SessionId,
        ) -> Result<Option<crate::store::SessionRow>, crate::store::StoreError> {
            use crate::store::rows::{session_from, SessionTuple, SESSION_COLUMNS};
            let sql =
                format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = $1 AND NOT deleted");
            let row: Option<SessionTuple> = sqlx::query_as(&sql)
                .bind(id.to_string())
                .fetch_optional(pool)
                .await?;
            row.map(session_from).transpose()
        }

        /// Every session in `status`, least recently updated first.
        pub(super) async fn sessions_with_status(
            pool: &$conn,
            status: shared::api::SessionStatus,
        ) -> Result<Vec<crate::domain::SessionId>, crate::store::StoreError> {
            let ids: Vec<(String,)> =
                sqlx::query_as("SELECT id FROM sessions WHERE status = $1 ORDER BY updated_at, id")
                    .bind(status.as_str())
                    .fetch_all(pool)
                    .await?;
            crate::store::rows::session_ids(ids)
        }

        /// Names a session (the first message no longer does); `updated_at` never goes
        /// back. Announces the changed row; false if there is no such session.
        pub(super) async fn rename_session(
            pool: &$conn,
            id: crate::domain::SessionId,
            title: &str,
            now_ms: i64,
        ) -> Result<bool, crate::store::StoreError> {
            let mut tx = pool.begin().await?;
            let done = sqlx::query(
                "UPDATE sessions SET title = $1, auto_title = FALSE, \
                   updated_at = CASE WHEN updated_at > $2 THEN updated_at ELSE $2 END \
                 WHERE id = $3",
            )
            .bind(title)
            .bind(now_ms)
            .bind(id.to_string())
            .execute(&mut *tx)
            .await?;
            if done.rows_affected() == 0 {
                return Ok(false);
            }
            $announce(&mut *tx, &crate::store::Change::Listed { session: id }).await?;
            tx.commit().await?;
            Ok(true)
        }

        /// Every line of a conversation (its first line's id), oldest first.
        pub(super) async fn conversation(
            pool: &$conn,
            first: crate::domain::SessionId,
        ) -> Result<Vec<crate::store::SessionRow>, crate::store::StoreError> {
            use crate::store::rows::{session_from, SessionTuple, SESSION_COLUMNS};
            let sql = format!(
                "SELECT {SESSION_COLUMNS} FROM sessions \
                 WHERE (id = $1 OR root_id = $1) AND NOT deleted ORDER BY created_at, id"
            );
            let rows: Vec<SessionTuple> = sqlx::query_as(&sql)
                .bind(first.to_string())
                .fetch_all(pool)
                .await?;
            rows.into_iter().map(session_from).collect()
        }

        /// One interrupt of a session.
        pub(super) async fn interrupt(
            pool: &$conn,
            session: crate::domain::SessionId,
            interrupt_id: &str,
        ) -> Result<Option<crate::store::InterruptRow>, crate::store::StoreError> {
            use crate::store::rows::{interrupt_from, InterruptTuple, INTERRUPT_COLUMNS};
            let sql = format!(
                "SELECT {INTERRUPT_COLUMNS} FROM interrupts WHERE id = $1 AND session_id = $2"
            );
            let row: Option<InterruptTuple> = sqlx::query_as(&sql)
                .bind(interrupt_id)
                .bind(session.to_string())
                .fetch_optional(pool)
                .await?;
            row.map(interrupt_from).transpose()
        }

        /// A session's interrupts still waiting for an answer, oldest first.
        pub(super) async fn pending_interrupts(
            pool: &$conn,
            session: crate::domain::SessionId,
        ) -> Result<Vec<crate::store::InterruptRow>, crate::store::StoreError> {
            use crate::store::rows::{interrupt_from, InterruptTuple, INTERRUPT_COLUMNS};
            let sql = format!(
                "SELECT {INTERRUPT_COLUMNS} FROM interrupts \
                 WHERE session_id = $1 AND status = 'pending' ORDER BY created_at, id"
            );
            let rows: Vec<InterruptTuple> = sqlx::query_as(&sql)
                .bind(session.to_string())
                .fetch_all(pool)
                .await?;
            rows.into_iter().map(interrupt_from).collect()
        }

        /// A session's queued messages, in the order they run.
        pub(super) async fn queued_messages(
            pool: &$conn,
            session: crate::domain::SessionId,
        ) -> Result<Vec<crate::store::QueuedRow>, crate::store::StoreError> {
            use crate::store::queued::{queued_from, QueuedTuple, QUEUED_COLUMNS};
            let sql = format!(
                "SELECT {QUEUED_COLUMNS} FROM queued_messages \
                 WHERE session_id = $1 ORDER BY position"
            );
            let rows: Vec<QueuedTuple> = sqlx::query_as(&sql)
                .bind(session.to_string())
                .fetch_all(pool)
                .await?;
            rows.into_iter().map(queued_from).collect()
        }

        /// Idle sessions with messages queued: nothing runs to take them (a crash came
        /// between a run's end and the next start), least recently updated first.
        pub(super) async fn idle_with_queue(
            pool: &$conn,
        ) -> Result<Vec<crate::domain::SessionId>, crate::store::StoreError> {
            let ids: Vec<(String,)> = sqlx::query_as(
                "SELECT id FROM sessions WHERE status = 'idle' AND NOT deleted \
                   AND EXISTS (SELECT 1 FROM queued_messages q WHERE q.session_id = sessions.id) \
                 ORDER BY updated_at, id",
            )
            .fetch_all(pool)
            .await?;
            crate::store::rows::session_ids(ids)
        }

        /// Pending interrupts whose deadline has passed, earliest first. Every instance's
        /// sweeper may read the same ones; the answer's guard lets exactly one expiry
        /// through.
        pub(super) async fn expired_interrupts(
            pool: &$conn,
            now_ms: i64,
            limit: u32,
        ) -> Result<Vec<crate::store::InterruptRow>, crate::store::StoreError> {
            use crate::store::rows::{interrupt_from, InterruptTuple, INTERRUPT_COLUMNS};
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
    };
}

pub(crate) use sessions_on;

/// Deletes, with their rows, the deleted sessions no branch reads from any more (a delete
/// marks its session `deleted` first, so one that branches read from stays hidden until
/// its last branch goes). Run until it deletes nothing: a parent may be freed by its child.
pub(crate) const PURGE_HIDDEN: &str = "DELETE FROM sessions WHERE deleted \
     AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.parent_id = sessions.id) RETURNING id";
/// Marks a visible session deleted (hidden everywhere), before [`PURGE_HIDDEN`].
pub(crate) const HIDE: &str = "UPDATE sessions SET deleted = TRUE WHERE id = $1 AND NOT deleted";

/// Numbers each conversation's lines, most recently updated first (`line`): a list that
/// keeps [`ONE_LINE`] shows each conversation once.
pub(crate) const ONCE_PER_CONVERSATION: &str = "ROW_NUMBER() OVER (PARTITION BY \
     coalesce(root_id, id) ORDER BY updated_at DESC, id DESC) AS line";
/// Keeps each conversation's most recently updated line.
pub(crate) const ONE_LINE: &str = "line = 1";

/// The first text of each session among `(session id, text)` rows, newest first: each
/// session's latest message that matched a search.
pub(crate) fn latest_per_session(
    rows: Vec<(String, String)>,
) -> std::collections::HashMap<crate::domain::SessionId, String> {
    let mut latest = std::collections::HashMap::new();
    for (session, text) in rows {
        if let Ok(session) = crate::domain::SessionId::parse(&session) {
            latest.entry(session).or_insert(text);
        }
    }
    latest
}
