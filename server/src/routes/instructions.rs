//! A person's instructions to the model, from HTTP: their own, for all their
//! conversations, and each conversation's own. The work is in `agent::instructions`.

use actix_web::web;
use shared::api::ErrorBody;
use shared::instructions::Instructions;

use super::JsonBody;
use super::Owned;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::Store;

/// `GET /api/instructions` → the caller's own instructions.
#[utoipa::path(get, path = "/api/instructions", tag = "instructions", responses(
    (status = 200, description = "The caller's own instructions, sent with every model call of theirs after the server's system prompt (empty: none)", body = Instructions),
))]
pub async fn get_own<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
) -> Result<web::Json<Instructions>, ApiError> {
    let text = state.runner.instructions().person(caller.user).await?;
    Ok(web::Json(Instructions { text }))
}

/// `PUT /api/instructions` `{text}` → the caller's own instructions, as kept.
#[utoipa::path(put, path = "/api/instructions", tag = "instructions", request_body = Instructions, responses(
    (status = 200, description = "Kept (trimmed; empty removes them): the caller's runs from now on are told them, in every conversation; each run records them in its log when they differ from the last it recorded (`CUSTOM tandem.instructions`, scope `person`)", body = Instructions),
    (status = 422, description = "`invalid_instructions`: longer than 8,000 characters, or a control character other than line breaks and tabs; nothing changed", body = ErrorBody),
))]
pub async fn put_own<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    body: JsonBody,
) -> Result<web::Json<Instructions>, ApiError> {
    let max = state.limits.max_body_bytes;
    let wanted: Instructions = body.read(max).await?;
    let instructions = state.runner.instructions();
    let text = instructions.set_person(caller.user, &wanted.text).await?;
    Ok(web::Json(Instructions { text }))
}

/// `GET /api/sessions/{id}/instructions` → the conversation's own instructions.
#[utoipa::path(get, path = "/api/sessions/{id}/instructions", tag = "instructions", responses(
    (status = 200, description = "The instructions of the session's line, as its log holds them (a branch keeps those of the prefix it shares; empty: none)", body = Instructions),
))]
pub async fn get_session<S: Store>(
    Owned { state, row, .. }: Owned<S>,
) -> Result<web::Json<Instructions>, ApiError> {
    let text = state.runner.instructions().conversation(row.id).await?;
    Ok(web::Json(Instructions { text }))
}

/// `PUT /api/sessions/{id}/instructions` `{text}` → the conversation's own instructions, as
/// kept.
#[utoipa::path(put, path = "/api/sessions/{id}/instructions", tag = "instructions", request_body = Instructions, responses(
    (status = 200, description = "Kept (trimmed; empty removes them): logged as `CUSTOM tandem.instructions` (scope `conversation`) inside the active run or as a short run of its own; the next model call of the line is told them after the caller's own", body = Instructions),
    (status = 422, description = "`invalid_instructions`: longer than 8,000 characters, or a control character other than line breaks and tabs; nothing changed", body = ErrorBody),
))]
pub async fn put_session<S: Store>(
    Owned { state, row, .. }: Owned<S>,
    body: JsonBody,
) -> Result<web::Json<Instructions>, ApiError> {
    let max = state.limits.max_body_bytes;
    let wanted: Instructions = body.read(max).await?;
    let instructions = state.runner.instructions();
    let text = instructions.set_conversation(row.id, &wanted.text).await?;
    Ok(web::Json(Instructions { text }))
}
