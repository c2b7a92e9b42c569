//! Share links in SQL both backends run. Only hashes of link tokens are stored.

/// Implements [`crate::store::Shares`] for a backend's store (the arguments are those
/// [`super`] describes, with `$announce`: how the backend tells other processes a link
/// was deleted, inside the transaction that deletes it).
macro_rules! shares_on {
    ([$($generics:tt)*] $store:ty, $keeper:path, $writes:ident, $reads:ident, $announce:path) => {
        impl<$($generics)*> crate::store::Shares for $store {
            async fn create_share(
                &self,
                share: &crate::store::ShareRow,
                token: crate::domain::TokenHash,
            ) -> Result<(), crate::store::StoreError> {
                sqlx::query(
                    "INSERT INTO shares (id, session_id, hash, hide_reasoning, \
                     hide_tool_arguments, hide_attachments, hide_state, show_instructions, \
                     created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
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
                .execute(&$keeper(self).$writes)
                .await?;
                Ok(())
            }

            async fn shares(
                &self,
                session: crate::domain::SessionId,
            ) -> Result<Vec<crate::store::ShareRow>, crate::store::StoreError> {
                use crate::store::sql::shares::{share_from, SHARE_COLUMNS};
                let sql = format!(
                    "SELECT {SHARE_COLUMNS} FROM shares WHERE session_id = $1 \
                     ORDER BY created_at, id"
                );
                let pool = &$keeper(self).$reads;
                crate::store::sql::rows_of!(pool, &sql, share_from, session.to_string())
            }

            async fn delete_share(
                &self,
                session: crate::domain::SessionId,
                id: &str,
            ) -> Result<bool, crate::store::StoreError> {
                let mut tx = $keeper(self).$writes.begin().await?;
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

            async fn share_for_token(
                &self,
                token: crate::domain::TokenHash,
            ) -> Result<
                Option<(crate::store::ShareRow, crate::domain::TokenHash)>,
                crate::store::StoreError,
            > {
                use crate::store::sql::shares::{share_from, ShareTuple, SHARE_COLUMNS};
                let sql = format!("SELECT {SHARE_COLUMNS}, hash FROM shares WHERE hash = $1");
                type Found = (String, String, bool, bool, bool, bool, bool, i64, Vec<u8>);
                let row: Option<Found> = sqlx::query_as(&sql)
                    .bind(&token.as_bytes()[..])
                    .fetch_optional(&$keeper(self).$reads)
                    .await?;
                let Some((id, session, reasoning, arguments, attachments, state, shown, at, hash)) =
                    row
                else {
                    return Ok(None);
                };
                let hash = crate::domain::TokenHash::from_bytes(&hash).ok_or_else(|| {
                    crate::store::StoreError::Corrupt("a stored hash is not 32 bytes".into())
                })?;
                let share: ShareTuple =
                    (id, session, reasoning, arguments, attachments, state, shown, at);
                Ok(Some((share_from(share)?, hash)))
            }
        }
    };
}

pub(crate) use shares_on;

use crate::domain::SessionId;
use crate::store::{ShareRow, StoreError};

/// A share link's row as its columns read.
pub(crate) type ShareTuple = (String, String, bool, bool, bool, bool, bool, i64);
/// The columns a [`ShareTuple`] reads, in its order.
pub(crate) const SHARE_COLUMNS: &str = "id, session_id, hide_reasoning, hide_tool_arguments, \
     hide_attachments, hide_state, show_instructions, created_at";

/// A share link from its columns.
pub(crate) fn share_from(row: ShareTuple) -> Result<ShareRow, StoreError> {
    Ok(ShareRow {
        id: row.0,
        session: SessionId::parse(&row.1).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        hide_reasoning: row.2,
        hide_tool_arguments: row.3,
        hide_attachments: row.4,
        hide_state: row.5,
        show_instructions: row.6,
        created_at: row.7,
    })
}
