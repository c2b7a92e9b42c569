//! Branches from HTTP: `POST /api/sessions/{id}/fork`, editing a person's message and
//! regenerating a run (each a branch that parts just before that run, with a run of its
//! own). The work is in [`crate::agent::branches`].

use actix_web::{web, HttpResponse};
use shared::api::{
    BranchList, BranchStarted, EditMessage, ErrorBody, ForkSession, Regenerate, SessionSummary,
};

use super::sessions::valid_title;
use super::JsonBody;
use super::Owned;
use crate::agent::branches::{self, Redo};
use crate::agent::NewMessage;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::session_list::summary;
use crate::state::AppState;
use crate::store::{SessionRow, Store};

/// `POST /api/sessions/{id}/fork` `{atSeq, title?}` → 201 with the branch's summary.
#[utoipa::path(post, path = "/api/sessions/{id}/fork", tag = "sessions",
    params(("id" = String, Path, format = Uuid, description = "The session to branch (a UUID)")),
    request_body = ForkSession,
    responses(
        (status = 201, description = "The branch: a new session whose history is the parent's events up to `atSeq` (shared, not copied), then its own; `parentId` and `forkSeq` say where it parts (a seq inside the parent's own shared prefix parts from the ancestor that holds it)", body = SessionSummary),
        (status = 400, description = "Malformed body, a title of the wrong length, or not a session id", body = ErrorBody),
        (status = 404, description = "No such session of the caller's, or `atSeq` past its end", body = ErrorBody),
        (status = 422, description = "`not_a_fork_point`: `atSeq` is inside a run (a branch parts at 0 or at a run's `RUN_FINISHED` or `RUN_ERROR`; at a pause the branch waits with its own copy of the questions)", body = ErrorBody),
    )
)]
pub async fn fork<S: Store>(
    Owned { state, caller, row }: Owned<S>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let asked: ForkSession = body.read(state.limits.max_body_bytes).await?;
    let title = asked.title.as_deref().map(valid_title).transpose()?;
    state.rates.create_session(caller.user)?;
    let branch = branches::fork(&*state.store, &row, asked.at_seq, title.as_deref()).await?;
    Ok(HttpResponse::Created().json(summary(branch)))
}

/// `GET /api/sessions/{id}/branches` → every line of the session's conversation.
#[utoipa::path(get, path = "/api/sessions/{id}/branches", tag = "sessions",
    params(("id" = String, Path, format = Uuid, description = "Any line of the conversation (a UUID)")),
    responses(
        (status = 200, description = "Every line of the session's conversation, oldest first: the first line, then each branch with `parentId` and `forkSeq` (where it parts)", body = BranchList),
    )
)]
pub async fn list<S: Store>(
    Owned { state, row, .. }: Owned<S>,
) -> Result<web::Json<BranchList>, ApiError> {
    let lines = state.store.conversation(row.conversation).await?;
    Ok(web::Json(BranchList {
        branches: lines.into_iter().map(summary).collect(),
    }))
}

/// `POST /api/sessions/{id}/messages/{messageId}/edit` `{text}` → 201: a branch that
/// parts just before the message's run, with the new text sent in it.
#[utoipa::path(post, path = "/api/sessions/{id}/messages/{message}/edit", tag = "runs",
    request_body = EditMessage,
    responses(
        (status = 201, description = "The branch and the run the new text started in it", body = BranchStarted),
        (status = 404, description = "No such session of the caller's, or no such message in it", body = ErrorBody),
        (status = 422, description = "`invalid_message`: the new text is empty or too long, or the message is the assistant's (regenerate it instead)", body = ErrorBody),
    )
)]
pub async fn edit<S: Store>(
    Owned { state, caller, row }: Owned<S>,
    path: web::Path<(String, String)>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let (_, message_id) = path.into_inner();
    let edit: EditMessage = body.read(state.limits.max_body_bytes).await?;
    // Checked against the line edited: the branch may part from a line before it.
    let attachments = match &edit.attachments {
        Some(ids) => Some(state.runner.attachments(row.id, ids).await?),
        None => None,
    };
    let redo = branches::edit(&*state.store, &row, &message_id, edit.text, attachments);
    let redo = redo.await?;
    start(&state, &caller, &row, redo, None).await
}

/// `POST /api/sessions/{id}/runs/{runId}/regenerate` `{model?}` → 201: a branch that
/// parts just before the run, with its message sent again.
#[utoipa::path(post, path = "/api/sessions/{id}/runs/{run}/regenerate", tag = "runs",
    request_body(content = Regenerate, content_type = "application/json",
                 description = "May be empty"),
    responses(
        (status = 201, description = "The branch and the run its message started again in it", body = BranchStarted),
        (status = 404, description = "No such session of the caller's, or no such run in it", body = ErrorBody),
        (status = 422, description = "`invalid_message`: the run is still going, no message of the person's started it (it continued after an answer), or the model is not one of `GET /api/models`", body = ErrorBody),
    )
)]
pub async fn regenerate<S: Store>(
    Owned { state, caller, row }: Owned<S>,
    path: web::Path<(String, String)>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let (_, run_id) = path.into_inner();
    let max = state.limits.max_body_bytes;
    let asked: Regenerate = body.read_or_default(max).await?;
    let redo = branches::regenerate(&*state.store, &row, &run_id).await?;
    start(&state, &caller, &row, redo, asked.model).await
}

/// Checks a redo's message (its text, its model, room in the queue, the caller's rates),
/// then makes its branch and sends the message there; answers 201 with the branch as it
/// now stands. Nothing is written on a refusal.
async fn start<S: Store>(
    state: &AppState<S>,
    caller: &Caller,
    parent: &SessionRow,
    redo: Redo,
    model: Option<String>,
) -> Result<HttpResponse, ApiError> {
    let message = NewMessage {
        model,
        attachments: redo.attachments.clone(),
        ..NewMessage::typed(redo.text.clone(), None)
    };
    state.runner.check_message(&message, parent.owner)?;
    state.rates.create_session(caller.user)?;
    state.rates.send_message(caller.user)?;
    let branch = redo.branch(&*state.store, parent).await?;
    let accepted = state
        .runner
        .post_message(branch.id, parent.owner, message)
        .await?;
    let now = state.store.session(branch.id).await?.unwrap_or(branch);
    Ok(HttpResponse::Created().json(BranchStarted {
        session: summary(now),
        run_id: accepted.run_id,
    }))
}
