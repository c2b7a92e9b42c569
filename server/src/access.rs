//! Who may reach what: the checks every door shares. A person's request, socket or AG-UI
//! thread reaches a session only as its owner ([`caller_session`], [`owned_session`]): a
//! session of another user answers exactly like one that does not exist. A share link's
//! viewer reaches its session only while the link opens it ([`share_of`], [`open_share`]),
//! and sees only what the link lets through ([`visibility`]). Routes, sockets, AG-UI and
//! the standing checks of open connections all call these; none decides on its own.

use crate::auth::{Caller, SHARE_PREFIX};
use crate::domain::{SessionId, TokenHash};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::{SessionRow, ShareRow, Store, StoreError};
use crate::visibility::Visibility;

/// The caller's session `id`: `None` when there is none, or it is another user's (the two
/// are one answer).
pub async fn caller_session<S: Store>(
    state: &AppState<S>,
    caller: &Caller,
    id: SessionId,
) -> Result<Option<SessionRow>, StoreError> {
    let row = state.store.session(id).await?;
    Ok(row.filter(|row| row.owner == caller.user))
}

/// Parses a session id from a path segment.
pub fn session_id(text: &str) -> Result<crate::domain::SessionId, ApiError> {
    crate::domain::SessionId::parse(text).map_err(|e| ApiError::BadRequest(e.to_string()))
}

/// The caller's session named by a path segment. A session of another user is answered
/// exactly like one that does not exist.
pub async fn owned_session<S: Store>(
    state: &AppState<S>,
    caller: &Caller,
    id: &str,
) -> Result<SessionRow, ApiError> {
    let id = session_id(id)?;
    caller_session(state, caller, id)
        .await?
        .ok_or_else(|| ApiError::SessionNotFound(id.to_string()))
}

/// The share link a token opens and its session; any failure is the same 404, so a
/// guess learns nothing.
pub async fn share_of<S: Store>(
    state: &AppState<S>,
    token: &str,
) -> Result<(ShareRow, SessionRow), ApiError> {
    if !token.starts_with(SHARE_PREFIX) || token.len() > 64 {
        return Err(no_such_link());
    }
    open_share(state, TokenHash::of(token)).await
}

/// The share link with this token hash and its session, if the link still opens it.
pub async fn open_share<S: Store>(
    state: &AppState<S>,
    hash: TokenHash,
) -> Result<(ShareRow, SessionRow), ApiError> {
    let missing = no_such_link;
    let Some((share, stored)) = state.store.share_for_token(hash).await? else {
        return Err(missing());
    };
    if !stored.matches(&hash) {
        return Err(missing());
    }
    let session = state
        .store
        .session(share.session)
        .await?
        .ok_or_else(missing)?;
    let owner = state.store.user(session.owner).await?;
    if owner.is_none_or(|owner| owner.revoked_at.is_some()) {
        return Err(missing());
    }
    Ok((share, session))
}

fn no_such_link() -> ApiError {
    ApiError::NotFound("no such share link".into())
}

/// What a share row hides, as the socket applies it.
pub fn visibility(share: &ShareRow) -> Visibility {
    Visibility {
        hide_reasoning: share.hide_reasoning,
        hide_tool_arguments: share.hide_tool_arguments,
        hide_attachments: share.hide_attachments,
        hide_state: share.hide_state,
        show_instructions: share.show_instructions,
    }
}
