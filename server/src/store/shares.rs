//! Share links: the rows every backend returns, and the trait that keeps them.

use std::future::Future;

use super::StoreError;
use crate::domain::{SessionId, TokenHash};

/// A read-only link to one session, and what it hides from whoever opens it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareRow {
    /// The link's id (a UUID; not the secret in its URL).
    pub id: String,
    pub session: SessionId,
    /// The viewer sees no reasoning.
    pub hide_reasoning: bool,
    /// The viewer sees tool names and results, but not the arguments of the calls.
    pub hide_tool_arguments: bool,
    /// The viewer sees no files or images attached (neither their names nor their bytes).
    pub hide_attachments: bool,
    /// The viewer sees no shared state.
    pub hide_state: bool,
    /// The viewer sees the instructions the model was given.
    pub show_instructions: bool,
    pub created_at: i64,
}

/// `text` with a LIKE pattern's wildcards (and the escape character) taken literally.
pub(crate) fn escape_like(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// Share links: recording, listing and deleting a session's, and the one a token opens.
pub trait Shares: Send + Sync + 'static {
    /// Records a share link of a session (only its token's hash is given).
    fn create_share(
        &self,
        share: &ShareRow,
        token: TokenHash,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A session's share links, oldest first.
    fn shares(
        &self,
        session: SessionId,
    ) -> impl Future<Output = Result<Vec<ShareRow>, StoreError>> + Send;

    /// Deletes one share link of a session, announcing
    /// [`Ending::ShareDeleted`](super::Ending::ShareDeleted) to the other processes sharing
    /// the database; false if it had none with that id.
    fn delete_share(
        &self,
        session: SessionId,
        id: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// The share link a token opens, with the stored hash that matched.
    fn share_for_token(
        &self,
        token: TokenHash,
    ) -> impl Future<Output = Result<Option<(ShareRow, TokenHash)>, StoreError>> + Send;
}
