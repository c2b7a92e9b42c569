//! A session's shared state, from HTTP: read whole, or changed with a JSON Patch. The
//! work is in `agent::shared_state`.

use actix_web::HttpResponse;
use serde_json::Value;
use shared::api::ErrorBody;
use shared::state::{PatchOperation, StateBody};

use super::JsonBody;
use super::Owned;
use crate::agent::shared_state::edit::StateNow;
use crate::error::ApiError;
use crate::store::Store;

/// `GET /api/sessions/{id}/state` → the document and the seq of its last change.
#[utoipa::path(get, path = "/api/sessions/{id}/state", tag = "sessions", responses(
    (status = 200, description = "The shared state (`{}` until something sets it)", body = StateBody),
))]
pub async fn get<S: Store>(Owned { state, row, .. }: Owned<S>) -> Result<HttpResponse, ApiError> {
    let now = state.runner.shared_state().current(row.id).await?;
    Ok(HttpResponse::Ok().json(body(now)))
}

/// `PATCH /api/sessions/{id}/state` with a JSON Patch (the array of operations) → the
/// state it made.
#[utoipa::path(patch, path = "/api/sessions/{id}/state", tag = "sessions",
    request_body(content = Vec<PatchOperation>, content_type = "application/json-patch+json",
        description = "A JSON Patch (RFC 6902): every operation applies, or none does. \
                       `application/json` is taken too."),
    responses(
        (status = 200, description = "Changed: logged as a `STATE_DELTA` (inside the active run, or as a short run of its own that leaves the session's status and questions as they were); the next model call sees it", body = StateBody),
        (status = 422, description = "`invalid_state`: an operation does not apply, or the state it makes breaks `--state-schema` or `--max-state-bytes`; `details` has the failing `path` (and `operation`, its index); nothing changed", body = ErrorBody),
    )
)]
pub async fn patch<S: Store>(
    Owned { state, row, .. }: Owned<S>,
    sent: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let delta: Vec<Value> = sent.read(state.limits.max_body_bytes).await?;
    let now = state.runner.shared_state().edit(row.id, delta).await?;
    Ok(HttpResponse::Ok().json(body(now)))
}

fn body(now: StateNow) -> StateBody {
    StateBody {
        state: now.state,
        seq: now.seq,
    }
}
