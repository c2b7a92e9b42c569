//! Feedback on answers: one rating per user and run, changed in place. A rating is written
//! by the log's writer, in the transaction of its `CUSTOM tandem.feedback` event (a guard
//! write, `store/sql/guards.rs`); this part reads them, for an operator and for `/metrics`.
//! One of the jobs of [`super::Records`], its SQL in `store/sql/feedback.rs`.

use std::future::Future;

use shared::feedback::Rating;

use super::StoreError;
use crate::domain::{SessionId, UserId};

/// A rating to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedbackRow {
    pub session: SessionId,
    pub run_id: String,
    pub user: UserId,
    /// The user's name, for the webhook.
    pub user_name: String,
    pub rating: Rating,
    pub comment: Option<String>,
    pub at_ms: i64,
}

/// A recorded rating, with who gave it and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFeedback {
    pub session: SessionId,
    pub session_title: String,
    pub run_id: String,
    pub user_name: String,
    pub rating: Rating,
    pub comment: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl StoredFeedback {
    /// The rating as `GET /api/feedback` and `tandem feedback` list it.
    pub fn listed(self) -> shared::feedback::ListedFeedback {
        shared::feedback::ListedFeedback {
            session_id: self.session.to_string(),
            session_title: self.session_title,
            run_id: self.run_id,
            user: self.user_name,
            rating: self.rating,
            comment: self.comment,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// Which ratings to list: changed at or after `since_ms`, of one kind or both, at most
/// `limit`, newest change first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedbackFilter {
    pub since_ms: i64,
    pub rating: Option<Rating>,
    pub limit: u32,
}

/// Reading the ratings.
pub trait FeedbackReads: Send + Sync + 'static {
    /// The ratings `filter` asks for.
    fn list_feedback(
        &self,
        filter: FeedbackFilter,
    ) -> impl Future<Output = Result<Vec<StoredFeedback>, StoreError>> + Send;

    /// How many ratings stand of each kind, every user's.
    fn feedback_counts(&self) -> impl Future<Output = Result<(u64, u64), StoreError>> + Send;
}
