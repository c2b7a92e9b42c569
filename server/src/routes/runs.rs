//! Run endpoints: post a message, answer an interrupt, cancel.

use actix_web::{web, HttpResponse};
use shared::api::{ContinueRun, ErrorBody, PostMessage, ResumeBody, RunAccepted};

use super::JsonBody;
use super::Owned;
use crate::agent::{NewMessage, Reply};
use crate::error::ApiError;
use crate::store::Store;

/// `POST /api/sessions/{id}/messages` → 202 `{runId}`.
#[utoipa::path(post, path = "/api/sessions/{id}/messages", tag = "runs", request_body = PostMessage, responses(
    (status = 202, description = "A run started; or, while a run is active or a question waits, the message waits for its turn (`queued`, with `whileRunning` `queue`, `interrupt` or `steer`)", body = RunAccepted),
    (status = 200, description = "A repeated `clientMessageId`: the run it started", body = RunAccepted),
    (status = 409, description = "`run_active` or `awaiting_input` (with `whileRunning: reject`), or `queue_full`", body = ErrorBody),
    (status = 422, description = "`invalid_message`: empty or too long", body = ErrorBody),
))]
pub async fn post_message<S: Store>(
    Owned { state, caller, row }: Owned<S>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let message: PostMessage = body.read(state.limits.max_body_bytes).await?;
    state.rates.send_message(caller.user)?;
    let attachments = state
        .runner
        .attachments(row.id, &message.attachments)
        .await?;
    let accepted = state
        .runner
        .post_message(
            row.id,
            row.owner,
            NewMessage {
                model: message.model,
                while_running: message.while_running,
                attachments,
                ..NewMessage::typed(message.text, message.client_message_id)
            },
        )
        .await?;
    Ok(accepted_response(accepted))
}

/// `POST /api/sessions/{id}/runs/{runId}/continue` → 202 `{runId}`: continues the answer the
/// session's last run was stopped in.
#[utoipa::path(post, path = "/api/sessions/{id}/runs/{run}/continue", tag = "runs",
    params(
        ("run" = String, Path, description = "The session's last run (`RUN_STARTED.runId`), which was stopped"),
    ),
    request_body(content = ContinueRun, content_type = "application/json",
                 description = "May be empty"),
    responses(
        (status = 202, description = "A run started that continues the stopped answer: the model is told to go on from where it stopped, and its answer joins that one (`CUSTOM tandem.continue`)", body = RunAccepted),
        (status = 200, description = "A repeated `clientMessageId`: the run it started", body = RunAccepted),
        (status = 409, description = "`run_active`, `awaiting_input` or messages waiting in the queue", body = ErrorBody),
        (status = 422, description = "`invalid_message`: the run is not the session's last, was not stopped, or wrote no answer; or a bad `clientMessageId`", body = ErrorBody),
    )
)]
pub async fn continue_run<S: Store>(
    Owned { state, caller, row }: Owned<S>,
    path: web::Path<(String, String)>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let (_, run_id) = path.into_inner();
    let max = state.limits.max_body_bytes;
    let asked: ContinueRun = body.read_or_default(max).await?;
    state.rates.send_message(caller.user)?;
    let accepted = state
        .runner
        .continue_answer(row.id, row.owner, &run_id, asked.client_message_id)
        .await?;
    Ok(accepted_response(accepted))
}

/// `POST /api/sessions/{id}/interrupts/{interruptId}` → 202 `{runId}` (200 if repeated).
#[utoipa::path(post, path = "/api/sessions/{id}/interrupts/{interrupt}", tag = "runs",
    request_body = ResumeBody,
    responses(
        (status = 202, description = "Answered; the run resumes", body = RunAccepted),
        (status = 200, description = "The same answer again: nothing changes", body = RunAccepted),
        (status = 404, description = "No such session of the caller's, or no such interrupt", body = ErrorBody),
        (status = 409, description = "Already answered differently (`details`: its state)", body = ErrorBody),
        (status = 410, description = "Expired before it was answered", body = ErrorBody),
        (status = 422, description = "`invalid_payload`: fails the interrupt's `responseSchema`", body = ErrorBody),
    )
)]
pub async fn answer<S: Store>(
    Owned { state, row, .. }: Owned<S>,
    path: web::Path<(String, String)>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let (_, interrupt_id) = path.into_inner();
    let answer: ResumeBody = body.read(state.limits.max_body_bytes).await?;
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
        .answers()
        .answer(
            row.id,
            row.owner,
            Reply {
                interrupt_id: &interrupt_id,
                status: answer.status,
                payload: answer.payload,
                input: None,
            },
        )
        .await?;
    Ok(accepted_response(accepted))
}

/// `POST /api/sessions/{id}/cancel` → 202.
#[utoipa::path(post, path = "/api/sessions/{id}/cancel", tag = "runs", responses(
    (status = 202, description = "The stop is recorded; the run ends cancelled", body = Object, example = json!({"status": "cancelling"})),
    (status = 409, description = "`idle`: nothing is running", body = ErrorBody),
))]
pub async fn cancel<S: Store>(
    Owned { state, row, .. }: Owned<S>,
) -> Result<HttpResponse, ApiError> {
    let id = row.id;
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
