//! Branches on PostgreSQL: where a new branch really parts.

use sqlx::PgConnection;

use crate::domain::SessionId;
use crate::store::{Fork, StoreError};

/// Where a branch asked to part at `fork` parts: a seq inside the parent's own shared
/// prefix belongs to the ancestor whose rows hold it, so the branch is that ancestor's.
/// Each session on the way is locked against deletion (`FOR SHARE`) until the branch is
/// made. `None` if a session on the way is missing, or the parent has fewer events than
/// `fork.at_seq` (its head: `last_seq`, or the log's key where bare inserts went further).
pub(super) async fn branch_point(
    conn: &mut PgConnection,
    fork: Fork,
) -> Result<Option<Fork>, StoreError> {
    let mut at = fork;
    loop {
        let row: Option<(i64, Option<String>, Option<i64>)> = sqlx::query_as(concat!(
            "SELECT ",
            super::head_of!("last_seq", "$1"),
            ", parent_id, fork_seq FROM sessions WHERE id = $1 FOR SHARE"
        ))
        .bind(at.parent.to_string())
        .fetch_optional(&mut *conn)
        .await?;
        let Some((last, parent, fork_seq)) = row else {
            return Ok(None);
        };
        if at.at_seq > last as u64 {
            return Ok(None);
        }
        match (parent, fork_seq) {
            (Some(parent), Some(fork_seq)) if at.at_seq <= fork_seq as u64 => {
                let parent = SessionId::parse(&parent).map_err(super::corrupt)?;
                at = Fork {
                    parent,
                    at_seq: at.at_seq,
                };
            }
            _ => return Ok(Some(at)),
        }
    }
}
