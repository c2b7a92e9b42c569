//! Session rows in SQL both backends run (`$1` placeholders, `TRUE`/`FALSE`, `CASE` where
//! one would write `max` on SQLite and `greatest` on PostgreSQL): the list, one row, the
//! rows in a status, a conversation's lines, renames. What differs per dialect, each
//! backend's `sessions.rs` defines: search (text matching and JSON functions are each
//! dialect's own, and SQLite also reads its log's tail), retention's delete, and a row's
//! exact last seq from its log.

/// Implements [`crate::store::Sessions`] for a backend's store (`$store`: the store,
/// `$writes` and `$reads`: its pools, `$announce`: how it tells the other processes
/// sharing the database of a change inside the transaction that makes it, `$told`: what it
/// does with the changes once they are committed, a function of the store and the
/// changes). The expanding file defines `search_sessions` and `matched_messages` (the
/// owner's rows a text matches, and the latest message that matched in each),
/// `delete_idle_before` (retention's delete, with the ids it deleted) and `as_they_stand`
/// (rows with their exact last seq, which the log may hold further on than the row).
macro_rules! sessions_on {
    ($store:ty, $writes:ident, $reads:ident, $announce:path, $told:expr) => {
        impl crate::store::Sessions for $store {
            async fn session(
                &self,
                id: crate::domain::SessionId,
            ) -> Result<Option<crate::store::SessionRow>, crate::store::StoreError> {
                use crate::store::rows::SESSION_COLUMNS;
                let sql =
                    format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = $1 AND NOT deleted");
                Ok(session_rows(self, &sql, id.to_string()).await?.pop())
            }

            async fn list_sessions(
                &self,
                owner: crate::domain::UserId,
            ) -> Result<Vec<crate::store::SessionRow>, crate::store::StoreError> {
                use crate::store::rows::SESSION_COLUMNS;
                use crate::store::sql::sessions::{ONCE_PER_CONVERSATION, ONE_LINE};
                let sql = format!(
                    "SELECT {SESSION_COLUMNS} FROM (SELECT *, {ONCE_PER_CONVERSATION} \
                       FROM sessions WHERE owner_id = $1 AND NOT deleted) AS listed \
                     WHERE {ONE_LINE} ORDER BY updated_at DESC, id DESC"
                );
                session_rows(self, &sql, owner.to_string()).await
            }

            async fn search_sessions(
                &self,
                owner: crate::domain::UserId,
                text: &str,
            ) -> Result<Vec<crate::store::Found>, crate::store::StoreError> {
                let rows = search_sessions(&self.$reads, owner, text).await?;
                let rows = as_they_stand(self, rows).await?;
                let mut messages = matched_messages(&self.$reads, &rows, text).await?;
                Ok(rows
                    .into_iter()
                    .map(|session| crate::store::Found {
                        message: messages.remove(&session.id),
                        session,
                    })
                    .collect())
            }

            async fn conversation(
                &self,
                first: crate::domain::SessionId,
            ) -> Result<Vec<crate::store::SessionRow>, crate::store::StoreError> {
                use crate::store::rows::SESSION_COLUMNS;
                let sql = format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions \
                     WHERE (id = $1 OR root_id = $1) AND NOT deleted ORDER BY created_at, id"
                );
                session_rows(self, &sql, first.to_string()).await
            }

            async fn sessions_with_status(
                &self,
                status: shared::api::SessionStatus,
            ) -> Result<Vec<crate::domain::SessionId>, crate::store::StoreError> {
                crate::store::sql::rows_of!(
                    &self.$reads,
                    "SELECT id FROM sessions WHERE status = $1 ORDER BY updated_at, id",
                    crate::store::rows::session_id_of,
                    status.as_str(),
                )
            }

            async fn rename_session(
                &self,
                id: crate::domain::SessionId,
                title: &str,
                now_ms: i64,
            ) -> Result<bool, crate::store::StoreError> {
                let listed = crate::store::Change::Listed { session: id };
                let mut tx = self.$writes.begin().await?;
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
                $announce(&mut *tx, &listed).await?;
                tx.commit().await?;
                ($told)(self, vec![listed]);
                Ok(true)
            }

            async fn delete_idle_before(
                &self,
                cutoff_ms: i64,
                limit: u32,
            ) -> Result<Vec<crate::domain::SessionId>, crate::store::StoreError> {
                let deleted = delete_idle_before(&self.$writes, cutoff_ms, limit).await?;
                let changes = deleted
                    .iter()
                    .map(|&session| crate::store::Change::Deleted { session })
                    .collect();
                ($told)(self, changes);
                Ok(deleted)
            }
        }

        /// The rows `sql` selects ([`crate::store::rows::SESSION_COLUMNS`], with `$1`
        /// bound to `key`) as they stand.
        async fn session_rows(
            store: &$store,
            sql: &str,
            key: String,
        ) -> Result<Vec<crate::store::SessionRow>, crate::store::StoreError> {
            use crate::store::rows::{session_from, SessionTuple};
            let rows: Vec<SessionTuple> = sqlx::query_as(sql)
                .bind(key)
                .fetch_all(&store.$reads)
                .await?;
            let rows = rows
                .into_iter()
                .map(session_from)
                .collect::<Result<_, _>>()?;
            as_they_stand(store, rows).await
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

/// Numbers each conversation's lines, most recently updated first (`line`), a replay's
/// trials after every line of the person's own: a list that keeps [`ONE_LINE`] shows each
/// conversation once, by the line its person last worked in.
pub(crate) const ONCE_PER_CONVERSATION: &str = "ROW_NUMBER() OVER (PARTITION BY \
     coalesce(root_id, id) ORDER BY CASE WHEN EXISTS (SELECT 1 FROM replay_trials r \
       WHERE r.session_id = sessions.id) THEN 1 ELSE 0 END, updated_at DESC, id DESC) AS line";
/// Keeps each conversation's line the list shows.
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
