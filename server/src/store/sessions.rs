//! Session rows as every backend returns them: a session's row, where a branch parts,
//! what a search found. The log writes a session's row with its events (status, last
//! seq, title), so these are read from the store that keeps the log.

use shared::api::SessionStatus;

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
