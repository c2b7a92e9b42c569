//! Session rows as every backend returns them: a session's row, where a branch parts,
//! what a search found. The log writes a session's row with its events (status, last
//! seq, title), so these are read from the store that keeps the log.

use std::future::Future;

use shared::api::SessionStatus;

use super::StoreError;
use crate::domain::{SessionId, UserId};

/// The title of a session that has none yet.
pub const DEFAULT_TITLE: &str = "New session";

/// A session row.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: SessionId,
    /// The user who created it; nobody else can see it.
    pub owner: UserId,
    pub title: String,
    pub status: SessionStatus,
    pub active_run_id: Option<String>,
    pub last_seq: u64,
    pub created_at: i64,
    pub updated_at: i64,
    /// Where it parts from the session it was forked from; `None` for a conversation's
    /// first line.
    pub fork: Option<Fork>,
    /// The conversation it is a line of: the first line's id (its own when it is that one).
    pub conversation: SessionId,
}

impl SessionRow {
    /// A new session's row: idle, without events, the first line of its own conversation.
    pub fn created(id: SessionId, owner: UserId, title: &str, now_ms: i64) -> Self {
        Self {
            id,
            owner,
            title: title.to_string(),
            status: SessionStatus::Idle,
            active_run_id: None,
            last_seq: 0,
            created_at: now_ms,
            updated_at: now_ms,
            fork: None,
            conversation: id,
        }
    }
}

/// A session a search found: its row, and the text of the latest of its messages that
/// matched (`None` when only its title did).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub session: SessionRow,
    pub message: Option<String>,
}

/// Where a branch parts from its parent: its history is the parent's events
/// `1..=at_seq` (shared, read from the parent's rows), then its own from `at_seq + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fork {
    pub parent: SessionId,
    pub at_seq: u64,
}

/// A branch to make ([`EventLog::fork_session`](super::EventLog::fork_session)).
#[derive(Debug, Clone, Copy)]
pub struct NewBranch<'a> {
    /// The branch's id.
    pub id: SessionId,
    /// Where it parts from its parent.
    pub fork: Fork,
    /// The run that waits for its person at `fork.at_seq`, if one does: the branch then
    /// waits too, with its own copy of each question (the same ids, answered apart, with
    /// a fresh deadline of the same length).
    pub waiting: Option<&'a str>,
    /// Its name; the parent's when absent.
    pub title: Option<&'a str>,
    /// When it is made.
    pub now_ms: i64,
}

impl NewBranch<'_> {
    /// A branch `id` parting at `fork`, made at `now_ms`, named as its parent, waiting for
    /// no one.
    pub fn new(id: SessionId, fork: Fork, now_ms: i64) -> Self {
        NewBranch {
            id,
            fork,
            waiting: None,
            title: None,
            now_ms,
        }
    }
}

/// Session rows: one, the owner's list, a search, a conversation's lines, the sessions in
/// a status; renaming one; retention's delete. The log writes a session's row with its
/// events, so a backend reads rows with what its log knows (SQLite the exact last seq from
/// its tail in memory, PostgreSQL from the log's key).
pub trait Sessions: Send + Sync + 'static {
    /// One session, if it exists.
    fn session(
        &self,
        id: SessionId,
    ) -> impl Future<Output = Result<Option<SessionRow>, StoreError>> + Send;

    /// The sessions of `owner`, each conversation once (its most recently updated line),
    /// most recently updated first.
    fn list_sessions(
        &self,
        owner: UserId,
    ) -> impl Future<Output = Result<Vec<SessionRow>, StoreError>> + Send;

    /// The sessions of `owner` whose title or any message's text contains `text` (ASCII
    /// letters in any case), most recently updated first, each with its latest message
    /// that matched.
    fn search_sessions(
        &self,
        owner: UserId,
        text: &str,
    ) -> impl Future<Output = Result<Vec<Found>, StoreError>> + Send;

    /// Every line of the conversation whose first line is `first`, oldest first.
    fn conversation(
        &self,
        first: SessionId,
    ) -> impl Future<Output = Result<Vec<SessionRow>, StoreError>> + Send;

    /// Ids of the sessions in `status`, least recently updated first.
    fn sessions_with_status(
        &self,
        status: SessionStatus,
    ) -> impl Future<Output = Result<Vec<SessionId>, StoreError>> + Send;

    /// Renames a session (its first message no longer names it; its `updated_at` never
    /// goes back), announcing its listed row; false if it is gone.
    fn rename_session(
        &self,
        id: SessionId,
        title: &str,
        now_ms: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Deletes up to `limit` idle sessions last updated before `cutoff_ms`, with their
    /// events; never a session that is running or awaiting input. Returns their ids.
    fn delete_idle_before(
        &self,
        cutoff_ms: i64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<SessionId>, StoreError>> + Send;
}
