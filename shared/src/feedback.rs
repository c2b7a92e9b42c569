//! Feedback on answers: a person's thumbs up or down on the run that made an answer, with
//! an optional comment (`POST /api/sessions/{id}/runs/{runId}/feedback`), and the list an
//! operator reads (`GET /api/feedback`).

use serde::{Deserialize, Serialize};

/// Longest comment, in characters.
pub const MAX_COMMENT_CHARS: usize = 2000;

/// Up or down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Rating {
    Up,
    Down,
}

impl Rating {
    /// `up` or `down`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Up => "up",
            Self::Down => "down",
        }
    }

    /// The rating a stored or sent name stands for.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "up" => Some(Self::Up),
            "down" => Some(Self::Down),
            _ => None,
        }
    }
}

/// `POST /api/sessions/{id}/runs/{runId}/feedback` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GiveFeedback {
    pub rating: Rating,
    /// What was good or wrong; at most 2,000 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    pub comment: Option<String>,
}

/// The value of `CUSTOM tandem.feedback`, and the answer to a rating.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FeedbackEvent {
    /// The run whose answer is rated.
    pub run_id: String,
    pub rating: Rating,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The name of the user who rated it.
    pub user: String,
}

/// One rating as an operator lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ListedFeedback {
    pub session_id: String,
    pub session_title: String,
    pub run_id: String,
    /// The user's name.
    pub user: String,
    pub rating: Rating,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// `GET /api/feedback`: newest change first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FeedbackList {
    pub feedback: Vec<ListedFeedback>,
}
