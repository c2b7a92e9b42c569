//! Read-only share links. The owner creates, lists and deletes a session's links; anyone
//! holding a link reads the session through it (`GET /api/shared/{token}` and its
//! socket), with what the link hides removed by the server ([`crate::visibility`]). A link
//! stops working when it is deleted, its session is deleted or its owner is revoked.

use actix_web::{web, HttpResponse};
use shared::api::ErrorBody;
use shared::sharing::{CreateShare, CreatedShare, Share, ShareList, SharedSession};

use super::JsonBody;
use super::Owned;
use crate::access::share_of;
use crate::auth::SecretToken;
use crate::domain::{new_id, now_ms};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::{Ending, ShareRow, Store};

/// `POST /api/sessions/{id}/shares` `{hideReasoning?, hideToolArguments?}` → 201 with the
/// link, shown this once.
#[utoipa::path(post, path = "/api/sessions/{id}/shares", tag = "sharing",
    request_body(content = CreateShare, content_type = "application/json",
                 description = "May be empty: the link then shows everything"),
    responses(
        (status = 201, description = "The link; its secret is not shown again", body = CreatedShare),
        (status = 400, description = "Not a session id, or a malformed body", body = ErrorBody),
        (status = 409, description = "`too_many_share_links`: the session has `--max-shares-per-session` links", body = ErrorBody),
    )
)]
pub async fn create<S: Store>(
    Owned { state, caller, row }: Owned<S>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let session = row.id;
    let max = state.limits.max_body_bytes;
    let wanted: CreateShare = body.read_or_default(max).await?;
    let most = state.max_shares_per_session;
    if state.store.shares(session).await?.len() >= most as usize {
        return Err(ApiError::TooManyShareLinks(most));
    }
    state.rates.create_share(caller.user)?;
    let token = SecretToken::share_link();
    let share = ShareRow {
        id: new_id("shr"),
        session,
        hide_reasoning: wanted.hide_reasoning,
        hide_tool_arguments: wanted.hide_tool_arguments,
        hide_attachments: !wanted.attachments,
        hide_state: !wanted.state,
        show_instructions: wanted.instructions,
        created_at: now_ms(),
    };
    state.store.create_share(&share, token.hash()).await?;
    Ok(HttpResponse::Created().json(CreatedShare {
        share: listed(share),
        path: format!("/#/shared/{}", token.expose()),
        token: token.expose().to_string(),
    }))
}

/// `GET /api/sessions/{id}/shares`: the session's links (without their secrets).
#[utoipa::path(get, path = "/api/sessions/{id}/shares", tag = "sharing", responses(
    (status = 200, description = "The session's share links, oldest first", body = ShareList),
))]
pub async fn list<S: Store>(
    Owned { state, row, .. }: Owned<S>,
) -> Result<web::Json<ShareList>, ApiError> {
    let session = row.id;
    let shares = state.store.shares(session).await?;
    Ok(web::Json(ShareList {
        shares: shares.into_iter().map(listed).collect(),
    }))
}

/// `DELETE /api/sessions/{id}/shares/{share}` → 204; the link opens nothing from now on,
/// and sockets opened through it close at once (on every instance).
#[utoipa::path(delete, path = "/api/sessions/{id}/shares/{share}", tag = "sharing",
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such session of the caller's, or no such link in it", body = ErrorBody),
    )
)]
pub async fn delete<S: Store>(
    Owned { state, row, .. }: Owned<S>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (_, share) = path.into_inner();
    let session = row.id;
    if !state.store.delete_share(session, &share).await? {
        return Err(ApiError::NotFound(format!(
            "no share link {share} in this session"
        )));
    }
    state.endings.announce(Ending::ShareDeleted(share));
    Ok(HttpResponse::NoContent().finish())
}

/// `GET /api/shared/{token}`: the shared session's title and state, and what the link
/// hides. Needs no sign-in: the link is the credential.
#[utoipa::path(get, path = "/api/shared/{token}", tag = "sharing", responses(
    (status = 200, description = "What the link shows", body = SharedSession),
    (status = 404, description = "No such link (deleted, its session deleted or its owner revoked)", body = ErrorBody),
))]
pub async fn shared<S: Store>(
    state: web::Data<AppState<S>>,
    path: web::Path<String>,
) -> Result<web::Json<SharedSession>, ApiError> {
    let (share, session) = share_of(&state, &path).await?;
    Ok(web::Json(SharedSession {
        title: session.title,
        status: session.status,
        last_seq: session.last_seq,
        hide_reasoning: share.hide_reasoning,
        hide_tool_arguments: share.hide_tool_arguments,
        attachments: !share.hide_attachments,
        state: !share.hide_state,
        instructions: share.show_instructions,
    }))
}

fn listed(share: ShareRow) -> Share {
    Share {
        id: share.id,
        hide_reasoning: share.hide_reasoning,
        hide_tool_arguments: share.hide_tool_arguments,
        attachments: !share.hide_attachments,
        state: !share.hide_state,
        instructions: share.show_instructions,
        created_at: share.created_at,
    }
}
