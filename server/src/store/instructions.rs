//! A person's own instructions to the model, for all their conversations: one row per
//! user. Each conversation's own are in its log (`CUSTOM tandem.instructions`), as are the
//! person's as each run used them, so the row is only where a run reads them from.

use std::future::Future;

use super::StoreError;
use crate::domain::UserId;

/// Reading and replacing a person's own instructions.
pub trait Instructions: Send + Sync + 'static {
    /// `user`'s own instructions (empty when they set none).
    fn user_instructions(
        &self,
        user: UserId,
    ) -> impl Future<Output = Result<String, StoreError>> + Send;

    /// Replaces `user`'s own instructions (empty text removes them).
    fn set_user_instructions(
        &self,
        user: UserId,
        text: &str,
        now_ms: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}
