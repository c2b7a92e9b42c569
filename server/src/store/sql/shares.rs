//! Share links in SQL both backends run. Only hashes of link tokens are stored.

/// Defines the share-link functions for one backend (`$conn`: its pool type, `$announce`:
/// how it tells other processes a link was deleted); see [`super::users`] for why a macro. Paths are written in full so that the backend's
/// own imports (for search and renames) do not collide.
macro_rules! shares_on {
    ($conn:ty, $announce:path) => {
        type ShareTuple = (String, String, bool, bool, bool, bool, bool, i64);
        const SHARE_COLUMNS: &str =
            "id, session_id, hide_reasoning, hide_tool_arguments, hide_attachments, hide_state, show_instructions, created_at";

        fn share_from(
            (id, session, hide_reasoning, hide_tool_arguments, hide_attachments, hide_state, show_instructions, created_at): ShareTuple,
        ) -> Result<crate::store::ShareRow, crate::store::StoreError> {
            Ok(crate::store::ShareRow {
                id,
                session: crate::domain::SessionId::parse(&session).map_err(|e| crate::store::StoreError::Corrupt(e.to_string()))?,
                hide_reasoning,
                hide_tool_arguments,
                hide_attachments,
                hide_state,
                show_instructions,
                created_at,
            })
        }

        pub(super) async fn create_share(
            pool: &$conn,
            share: &crate::store::ShareRow,
            token: crate::domain::TokenHash,
        ) -> Result<(), crate::store::StoreError> {
            sqlx::query(
                "INSERT INTO shares (id, session_id, hash, hide_reasoning, hide_tool_arguments, \
                 hide_attachments, hide_state, show_instructions, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(&share.id)
            .bind(share.session.to_string())
            .bind(&token.as_bytes()[..])
            .bind(share.hide_reasoning)
            .bind(share.hide_tool_arguments)
            .bind(share.hide_attachments)
            .bind(share.hide_state)
            .bind(share.show_instructions)
            .bind(share.created_at)
            .execute(pool)
            .await?;
            Ok(())
        }

        pub(super) async fn shares(pool: &$conn, session: crate::domain::SessionId) -> Result<Vec<crate::store::ShareRow>, crate::store::StoreError> {
            let sql =
                format!("SELECT {SHARE_COLUMNS} FROM shares WHERE session_id = $1 ORDER BY created_at, id");
            let rows: Vec<ShareTuple> = sqlx::query_as(&sql)
                .bind(session.to_string())
                .fetch_all(pool)
                .await?;
            rows.into_iter().map(share_from).collect()
        }

        pub(super) async fn delete_share(
            pool: &$conn,
            session: crate::domain::SessionId,
            id: &str,
        ) -> Result<bool, crate::store::StoreError> {
            let mut tx = pool.begin().await?;
            let done = sqlx::query("DELETE FROM shares WHERE session_id = $1 AND id = $2")
                .bind(session.to_string())
                .bind(id)
                .execute(&mut *tx)
                .await?;
            if done.rows_affected() == 0 {
                return Ok(false);
            }
            let ended = crate::store::Ending::ShareDeleted(id.to_string());
            $announce(&mut *tx, &crate::store::Change::Ended(ended)).await?;
            tx.commit().await?;
            Ok(true)
        }

        pub(super) async fn share_for_token(
            pool: &$conn,
            token: crate::domain::TokenHash,
        ) -> Result<Option<(crate::store::ShareRow, crate::domain::TokenHash)>, crate::store::StoreError> {
            let sql = format!("SELECT {SHARE_COLUMNS}, hash FROM shares WHERE hash = $1");
            let row: Option<(String, String, bool, bool, bool, bool, bool, i64, Vec<u8>)> = sqlx::query_as(&sql)
                .bind(&token.as_bytes()[..])
                .fetch_optional(pool)
                .await?;
            let Some((id, session, hide_reasoning, hide_tool_arguments, hide_attachments, hide_state, show_instructions, created_at, hash)) = row else {
                return Ok(None);
            };
            let hash = crate::domain::TokenHash::from_bytes(&hash)
                .ok_or_else(|| crate::store::StoreError::Corrupt("a stored hash is not 32 bytes".into()))?;
            let share = share_from((id, session, hide_reasoning, hide_tool_arguments, hide_attachments, hide_state, show_instructions, created_at))?;
            Ok(Some((share, hash)))
        }
    };
}

pub(crate) use shares_on;
