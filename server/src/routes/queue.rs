//! The messages waiting for their turn in a session, from HTTP: listed, edited and
//! withdrawn before they run. Sending one is `POST /api/sessions/{id}/messages` (or the
//! socket's message frame) while a run works; the work is in `agent::queue`.

use actix_web::{web, HttpResponse};
use shared::api::{EditMessage, ErrorBody};
use shared::queue::{QueuedList, QueuedMessage};

use super::JsonBody;
use super::Owned;
use crate::error::ApiError;
use crate::store::Store;

/// `GET /api/sessions/{id}/queue` → the messages waiting, in the order they run.
#[utoipa::path(get, path = "/api/sessions/{id}/queue", tag = "runs", responses(
    (status = 200, description = "The messages waiting for their turn (steering ones join the active run at its next model call)", body = QueuedList),
))]
pub async fn list<S: Store>(Owned { state, row, .. }: Owned<S>) -> Result<HttpResponse, ApiError> {
    let queued = state.store.queued_messages(row.id).await?;
    let queued = queued.iter().map(|q| q.message()).collect();
    Ok(HttpResponse::Ok().json(QueuedList { queued }))
}

/// `PATCH /api/sessions/{id}/queue/{queued}` `{text}` → the message with its new text.
#[utoipa::path(patch, path = "/api/sessions/{id}/queue/{queued}", tag = "runs", request_body = EditMessage, responses(
    (status = 200, description = "Its text changed (the session's sockets get a `queue` frame)", body = QueuedMessage),
    (status = 404, description = "No such session of the caller's, or no such queued message", body = ErrorBody),
    (status = 409, description = "`already_started`: its run began (`details.runId`)", body = ErrorBody),
    (status = 422, description = "`invalid_message`: empty or too long", body = ErrorBody),
))]
pub async fn edit<S: Store>(
    Owned { state, row, .. }: Owned<S>,
    path: web::Path<(String, String)>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let (_, queued) = path.into_inner();
    let asked: EditMessage = body.read(state.limits.max_body_bytes).await?;
    if asked.attachments.is_some() {
        return Err(ApiError::InvalidMessage(
            "a queued message's attachments stay as sent; withdraw it and send it again".into(),
        ));
    }
    // Read first: its turn may come the moment after the edit, and the answer is still it.
    let before = state.store.queued_messages(row.id).await?;
    let text = asked.text.clone();
    state
        .runner
        .queue()
        .change(row.id, &queued, Some(asked.text))
        .await?;
    match before.into_iter().find(|q| q.id == queued) {
        Some(found) => Ok(HttpResponse::Ok().json(shared::queue::QueuedMessage {
            text,
            ..found.message()
        })),
        // Queued between the read and the edit (an id seen in a `queue` frame first): the
        // edit took; its row holds the rest.
        None => {
            let now = state.store.queued_messages(row.id).await?;
            let found = now.into_iter().find(|q| q.id == queued);
            let found = found.ok_or_else(|| {
                ApiError::NotFound("the queued message started its run with the new text".into())
            })?;
            Ok(HttpResponse::Ok().json(found.message()))
        }
    }
}

/// `DELETE /api/sessions/{id}/queue/{queued}` → 204: it will not run.
#[utoipa::path(delete, path = "/api/sessions/{id}/queue/{queued}", tag = "runs", responses(
    (status = 204, description = "Withdrawn (the session's sockets get a `queue` frame)"),
    (status = 404, description = "No such session of the caller's, or no such queued message", body = ErrorBody),
    (status = 409, description = "`already_started`: its run began (`details.runId`)", body = ErrorBody),
))]
pub async fn withdraw<S: Store>(
    Owned { state, row, .. }: Owned<S>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (_, queued) = path.into_inner();
    state.runner.queue().change(row.id, &queued, None).await?;
    Ok(HttpResponse::NoContent().finish())
}
