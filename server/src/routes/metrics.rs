//! `GET /metrics`: the Prometheus scrape endpoint.

use actix_web::{web, HttpResponse};
use shared::api::ErrorBody;

use crate::error::ApiError;
use crate::metrics::METRICS;
use crate::state::AppState;
use crate::store::Store;

/// The content type of OpenMetrics text, which Prometheus negotiates.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// `GET /metrics` → every `tandem_…` family, OpenMetrics text.
#[utoipa::path(get, path = "/metrics", tag = "server", responses(
    (status = 200, description = "Prometheus metrics (OpenMetrics text): runs, events, commits, sockets, model calls and tokens, interrupts, answers, provider errors and retries", content_type = "application/openmetrics-text", body = String),
    (status = 503, description = "The database cannot be reached", body = ErrorBody),
))]
pub async fn metrics<S: Store>(state: web::Data<AppState<S>>) -> Result<HttpResponse, ApiError> {
    // The database knows what every instance's sessions wait for.
    let waiting = state.store.interrupts_waiting().await?;
    METRICS
        .interrupts_waiting
        .set(i64::try_from(waiting).unwrap_or(i64::MAX));
    let (up, down) = state.store.feedback_counts().await?;
    for (rating, count) in [("up", up), ("down", down)] {
        let label = crate::metrics::RatingLabel {
            rating: rating.into(),
        };
        METRICS
            .feedback
            .get_or_create(&label)
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }
    let stored = state.store.all_stored_bytes().await?;
    METRICS
        .attachment_bytes_stored
        .set(i64::try_from(stored).unwrap_or(i64::MAX));
    Ok(HttpResponse::Ok()
        .content_type(OPENMETRICS)
        .body(METRICS.encode()))
}
