//! Rating the open session's answers: `POST /api/sessions/{id}/runs/{runId}/feedback`.
//! What an answer shows as its rating is what the log says (the rating comes back over
//! the socket as `CUSTOM tandem.feedback`), never the page's guess.

use leptos::prelude::*;
use shared::feedback::{GiveFeedback, Rating};

use super::Session;
use crate::api::{rest, ApiError};

/// Rates the answer of `run` in the open session, with an optional comment.
pub async fn rate(
    session: Session,
    run: String,
    rating: Rating,
    comment: Option<String>,
) -> Result<(), ApiError> {
    let Some(id) = session.id().try_get_untracked().flatten() else {
        return Ok(());
    };
    let comment = comment.filter(|comment| !comment.trim().is_empty());
    rest::give_feedback(&id, &run, &GiveFeedback { rating, comment }).await
}
