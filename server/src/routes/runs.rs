//! Run endpoints: post a message, answer an interrupt, cancel.

use actix_web::{web, HttpResponse};
use shared::api::{PostMessage, ResumeBody, RunAccepted};

use super::{read_json, session_id};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::Store;

/// `POST /api/sessions/{id}/messages` → 202 `{runId}`.
pub async fn post_message<S: Store>(
    state: web::Data<AppState<S>>,
    path: web::Path<String>,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let id = session_id(&path)?;
    let message: PostMessage = read_json(body, None).await?;
    let accepted = state
        .runner
        .post_message(id, message.text, message.client_message_id)
        .await?;
    Ok(accepted_response(accepted))
}

/// `POST /api/sessions/{id}/interrupts/{interruptId}` → 202 `{runId}` (200 if repeated).
pub async fn answer<S: Store>(
    state: web::Data<AppState<S>>,
    path: web::Path<(String, String)>,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (id, interrupt_id) = path.into_inner();
    let id = session_id(&id)?;
    let answer: ResumeBody = read_json(body, None).await?;
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
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    state.runner.cancel(session_id(&path)?).await?;
    Ok(HttpResponse::Accepted().json(serde_json::json!({"status": "cancelling"})))
}

fn accepted_response(accepted: RunAccepted) -> HttpResponse {
    if accepted.duplicate {
        HttpResponse::Ok().json(accepted)
    } else {
        HttpResponse::Accepted().json(accepted)
    }
}
