//! Feedback on answers, from HTTP: a person rates an answer of theirs, an operator lists
//! everyone's. The work is in `agent::feedback`.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use shared::api::ErrorBody;
use shared::feedback::{FeedbackEvent, FeedbackList, GiveFeedback, Rating};

use super::JsonBody;
use super::Owned;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::{FeedbackFilter, Store, StoredFeedback};

/// Most ratings one list returns.
const MAX_LISTED: u32 = 1000;

/// `POST /api/sessions/{id}/runs/{runId}/feedback` `{rating, comment?}` → the rating.
#[utoipa::path(post, path = "/api/sessions/{id}/runs/{run}/feedback", tag = "runs",
    params(
        ("run" = String, Path, description = "The run whose answer is rated"),
    ),
    request_body = GiveFeedback,
    responses(
        (status = 200, description = "Recorded as `CUSTOM tandem.feedback` (in the active run, or as a short run of its own) with the caller's earlier rating of that answer replaced; a `feedback` webhook is owed", body = FeedbackEvent),
        (status = 404, description = "No such session of the caller's, or no answer of that run in it", body = ErrorBody),
        (status = 422, description = "`invalid_message`: a comment over 2,000 characters", body = ErrorBody),
    )
)]
pub async fn give<S: Store>(
    Owned { state, caller, row }: Owned<S>,
    path: web::Path<(String, String)>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let (_, run) = path.into_inner();
    let given: GiveFeedback = body.read(state.limits.max_body_bytes).await?;
    let who = (caller.user, &caller.name);
    let recorded = state
        .runner
        .feedback()
        .give(row.id, who, &run, given)
        .await?;
    Ok(HttpResponse::Ok().json(recorded))
}

/// `GET /api/feedback` query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// Only ratings given or changed at or after this time (ms since the epoch).
    since: Option<i64>,
    rating: Option<Rating>,
    /// At most this many (1 to 1,000; 100 when absent).
    limit: Option<u32>,
}

/// `GET /api/feedback?since=&rating=&limit=` → everyone's ratings, newest change first.
#[utoipa::path(get, path = "/api/feedback", tag = "runs",
    params(
        ("since" = Option<i64>, Query, description = "Only ratings given or changed at or after this time (ms since the epoch)"),
        ("rating" = Option<Rating>, Query, description = "Only `up` or only `down`"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 1000, description = "At most this many (100 when absent)"),
    ),
    responses(
        (status = 200, description = "Every user's ratings, newest change first", body = FeedbackList),
        (status = 400, description = "A malformed query", body = ErrorBody),
        (status = 403, description = "`not_an_operator`: the caller is not one of `--operators`", body = ErrorBody),
    )
)]
pub async fn list<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    if !state
        .operators
        .iter()
        .any(|name| name == caller.name.as_str())
    {
        return Err(ApiError::NotAnOperator);
    }
    let limit = query.limit.unwrap_or(100);
    if !(1..=MAX_LISTED).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "`limit` must be 1 to {MAX_LISTED}"
        )));
    }
    let filter = FeedbackFilter {
        since_ms: query.since.unwrap_or(0),
        rating: query.rating,
        limit,
    };
    let feedback = state
        .store
        .list_feedback(filter)
        .await?
        .into_iter()
        .map(StoredFeedback::listed)
        .collect();
    Ok(HttpResponse::Ok().json(FeedbackList { feedback }))
}
