//! Branches on SQLite: where a new branch really parts, each session's lineage (the
//! sessions whose rows hold its history, oldest first, each up to the seq it is read to),
//! and deletes that keep a shared prefix while branches read it.

use rusqlite::{Connection, OptionalExtension};

use super::tail::Tail;
use crate::domain::SessionId;
use crate::store::sql::sessions::{HIDE, PURGE_HIDDEN};
use crate::store::{Fork, StoreError};

/// Where a branch asked to part at `fork` parts: a seq inside the parent's own shared
/// prefix belongs to the ancestor whose rows hold it, so the branch is that ancestor's
/// (lineages stay as short as the history's real parts). `None` if a session on the way is
/// missing, or the parent has fewer events than `fork.at_seq`.
pub(super) fn branch_point(
    conn: &Connection,
    tail: &Tail,
    fork: Fork,
) -> Result<Option<Fork>, StoreError> {
    let mut at = fork;
    loop {
        let row: Option<(i64, Option<String>, Option<i64>)> = conn
            .prepare_cached("SELECT last_seq, parent_id, fork_seq FROM sessions WHERE id = ?")?
            .query_row([at.parent.to_string()], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .optional()?;
        let Some((last, parent, fork_seq)) = row else {
            return Ok(None);
        };
        let last = tail
            .last_seq(at.parent)
            .map_or(last as u64, |held| held.max(last as u64));
        if at.at_seq > last {
            return Ok(None);
        }
        match (parent, fork_seq) {
            (Some(parent), Some(fork_seq)) if at.at_seq <= fork_seq as u64 => {
                let parent =
                    SessionId::parse(&parent).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                at = Fork {
                    parent,
                    at_seq: at.at_seq,
                };
            }
            _ => return Ok(Some(at)),
        }
    }
}

/// The sessions whose rows hold `id`'s history, oldest first, each with the last seq read
/// from it (`u64::MAX` for `id` itself). Empty if `id` does not exist.
pub(super) fn lineage(
    conn: &Connection,
    id: SessionId,
) -> Result<Vec<(SessionId, u64)>, StoreError> {
    let mut select = conn.prepare_cached(LINEAGE)?;
    let rows = select.query_map([id.to_string()], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, Option<i64>>(1)?))
    })?;
    let mut line = Vec::new();
    for row in rows {
        let (session, upto) = row?;
        let session = SessionId::parse(&session).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        line.push((session, upto.map_or(u64::MAX, |upto| upto as u64)));
    }
    Ok(line)
}

/// The session, then each ancestor with the seq it is read up to: its child's fork point,
/// or less if a descendant parts earlier.
const LINEAGE: &str = "WITH RECURSIVE line (id, parent_id, fork_seq, upto, depth) AS ( \
       SELECT id, parent_id, fork_seq, NULL, 0 FROM sessions WHERE id = ? \
     UNION ALL \
       SELECT s.id, s.parent_id, s.fork_seq, \
         CASE WHEN l.upto IS NULL OR l.fork_seq < l.upto THEN l.fork_seq ELSE l.upto END, \
         l.depth + 1 \
       FROM sessions s JOIN line l ON s.id = l.parent_id \
     ) SELECT id, upto FROM line ORDER BY depth DESC";

/// What a delete did: whether the session was there to delete, and every session whose
/// rows went (itself, unless branches still read from it, and hidden parents it freed).
pub(super) struct Deleted {
    pub found: bool,
    pub gone: Vec<SessionId>,
}

/// Deletes `id` in one transaction: hides it, then purges every hidden session no branch
/// reads from (itself first, if none does).
pub(super) fn delete(conn: &Connection, id: SessionId) -> Result<Deleted, StoreError> {
    super::log::in_transaction(conn, || {
        let found = conn.prepare_cached(HIDE)?.execute([id.to_string()])? > 0;
        let gone = match found {
            true => purge(conn)?,
            false => Vec::new(),
        };
        Ok(Deleted { found, gone })
    })
}

/// Deletes hidden sessions no branch reads from until there are none.
fn purge(conn: &Connection) -> Result<Vec<SessionId>, StoreError> {
    let mut gone = Vec::new();
    loop {
        let mut purge = conn.prepare_cached(PURGE_HIDDEN)?;
        let ids: Vec<String> = purge
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        if ids.is_empty() {
            return Ok(gone);
        }
        for id in ids {
            gone.push(SessionId::parse(&id).map_err(|e| StoreError::Corrupt(e.to_string()))?);
        }
    }
}
