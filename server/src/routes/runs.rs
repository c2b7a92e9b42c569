//! Run endpoints: post a message, answer an interrupt, cancel.

use actix_web::{web, HttpRequest, HttpResponse};
use shared::api::{PostMessage, ResumeBody, RunAccepted};

use super::{owned_session, read_json};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::Store;

/// `POST /api/sessions/{id}/messages` → 202 `{runId}`.
pub async fn post_message<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    request: HttpRequest,
    path: web::Path<String>,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let id = owned_session(&state, &caller, &path).await?.id;
    let message: PostMessage = read_json(&request, body, state.limits.max_body_bytes, None).await?;
    state.rates.send_message(caller.user)?;
    let accepted = state
        .runner
        .post_message(id, message.text, message.client_message_id)
        .await?;
    Ok(accepted_response(accepted))
}

/// `POST /api/sessions/{id}/interrupts/{interruptId}` → 202 `{runId}` (200 if repeated).
pub async fn answer<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    request: HttpRequest,
    path: web::Path<(String, String)>,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (id, interrupt_id) = path.into_inner();
    let id = owned_session(&state, &caller, &id).await?.id;
    let answer: ResumeBody = read_json(&request, body, state.limits.max_body_bytes, None).await?;
    if answer
        .interrupt_id
        .as_ref()
        .is_some_and(|body_id| body_id != &interrupt_id)
    {
        return Err(ApiError::BadRequest(
            "interruptId in the body differs from the path".into(),
        ));
    }
    let accepted = state
        .runner
        .answer(id, &interrupt_id, answer.status, answer.payload)
        .await?;
    Ok(accepted_response(accepted))
}

/// `POST /api/sessions/{id}/cancel` → 202.
pub async fn cancel<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = owned_session(&state, &caller, &path).await?.id;
    state.runner.cancel(id).await?;
    Ok(HttpResponse::Accepted().json(serde_json::json!({"status": "cancelling"})))
}

fn accepted_response(accepted: RunAccepted) -> HttpResponse {
    if accepted.duplicate {
        HttpResponse::Ok().json(accepted)
    } else {
        HttpResponse::Accepted().json(accepted)
    }
}
