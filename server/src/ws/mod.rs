//! The session socket, `GET /api/sessions/{id}/ws?after=<seq>`.
//!
//! The handshake authenticates the caller (cookie or bearer token; the edge has already
//! refused foreign origins), checks the session is theirs, takes one of their socket
//! places and hands the connection to [`socket::serve`], which replays the log after
//! `after`, says `caught_up`, then follows live events and takes client frames. Sockets
//! never own agent state.
//!
//! A share link's socket, `GET /api/shared/{token}/ws`, is the same loop for a viewer
//! who may only watch: frames pass through the link's [`crate::visibility::Visibility`],
//! client frames get a `read_only` error, and the socket closes once the link is gone.

pub mod client_frames;
mod outbox;
mod socket;

use std::time::Duration;

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use crate::auth::Caller;
use crate::domain::{TokenHash, UserId};
use crate::error::ApiError;
use crate::limits::{SocketOwner, SocketSlot};
use crate::routes::owned_session;
use crate::state::AppState;
use crate::store::{SessionRow, Store};

/// How often the server pings, by default.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(10);
/// How long a client may stay silent (no pong, no frame) before it is closed, by default.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);

/// The socket heartbeat: ping every `interval`; close a client silent for `timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heartbeat {
    pub interval: Duration,
    pub timeout: Duration,
}

impl Default for Heartbeat {
    fn default() -> Self {
        Self {
            interval: HEARTBEAT_INTERVAL,
            timeout: CLIENT_TIMEOUT,
        }
    }
}
/// The socket's query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocketQuery {
    #[serde(default)]
    after: u64,
}

/// Upgrades to a WebSocket after checking the session is the caller's.
#[utoipa::path(
    get,
    path = "/api/sessions/{id}/ws",
    tag = "sessions",
    params(
        ("id" = String, Path, format = Uuid, description = "The session id (a UUID)"),
        ("after" = Option<u64>, Query, description = "Replay events after this seq, then follow live"),
    ),
    responses(
        (status = 101, description = "Upgraded to the session's WebSocket (docs/protocol.md)"),
        (status = 400, description = "Not a WebSocket request, a bad id or query", body = shared::api::ErrorBody),
        (status = 401, description = "No valid credentials", body = shared::api::ErrorBody),
        (status = 403, description = "A browser page of another origin", body = shared::api::ErrorBody),
        (status = 404, description = "No such session of the caller's", body = shared::api::ErrorBody),
        (status = 429, description = "Too many open sockets", body = shared::api::ErrorBody),
        (status = 503, description = "Storage unavailable", body = shared::api::ErrorBody),
    )
)]
pub async fn connect<S: Store>(
    request: HttpRequest,
    body: web::Payload,
    caller: Caller,
    path: web::Path<String>,
    query: web::Query<SocketQuery>,
    state: web::Data<AppState<S>>,
) -> Result<HttpResponse, ApiError> {
    let row = owned_session(&state, &caller, &path).await?;
    let place = state.sockets.open(SocketOwner::User(caller.user))?;
    upgrade(
        request,
        body,
        state,
        row,
        (caller.user, place),
        query.after,
        None,
    )
}

/// Upgrades to a read-only WebSocket of the session a share link opens, with what the
/// link hides removed from every event. Each link has its own `--sockets-per-user` places.
#[utoipa::path(
    get,
    path = "/api/shared/{token}/ws",
    tag = "sharing",
    params(
        ("token" = String, Path, description = "The link's secret (`tds_…`)"),
        ("after" = Option<u64>, Query, description = "Replay events after this seq, then follow live"),
    ),
    responses(
        (status = 101, description = "Upgraded to the shared session's read-only WebSocket"),
        (status = 400, description = "Not a WebSocket request, or a bad query", body = shared::api::ErrorBody),
        (status = 403, description = "A browser page of another origin", body = shared::api::ErrorBody),
        (status = 404, description = "No such share link", body = shared::api::ErrorBody),
        (status = 429, description = "Too many sockets open through this link", body = shared::api::ErrorBody),
        (status = 503, description = "Storage unavailable", body = shared::api::ErrorBody),
    ),
    security(())
)]
pub async fn connect_shared<S: Store>(
    request: HttpRequest,
    body: web::Payload,
    path: web::Path<String>,
    query: web::Query<SocketQuery>,
    state: web::Data<AppState<S>>,
) -> Result<HttpResponse, ApiError> {
    let (share, row) = crate::routes::share_of(&state, &path).await?;
    let shared = socket::SharedView {
        token: TokenHash::of(&path),
        visibility: crate::routes::visibility(&share),
    };
    let place = state
        .sockets
        .open(SocketOwner::ShareLink(share.id.clone()))?;
    let owner = row.owner;
    upgrade(
        request,
        body,
        state,
        row,
        (owner, place),
        query.after,
        Some(shared),
    )
}

/// Upgrades and spawns the socket's loop for `user`, holding the socket's place.
fn upgrade<S: Store>(
    request: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState<S>>,
    row: SessionRow,
    (user, place): (UserId, SocketSlot),
    after: u64,
    shared: Option<socket::SharedView>,
) -> Result<HttpResponse, ApiError> {
    // An `after` beyond the log names events that do not exist; follow from the end.
    let after = after.min(row.last_seq);
    let (response, outbox, stream) = outbox::upgrade(&request, body)
        .map_err(|e| ApiError::BadRequest(format!("not a WebSocket request: {e}")))?;
    let max = state.limits.max_frame_bytes;
    let stream = stream
        .max_frame_size(max)
        .aggregate_continuations()
        .max_continuation_size(max);
    let viewer = socket::Viewer {
        session: row.id,
        user,
        _place: place,
        shared,
    };
    // At ERROR level so that no filter drops the session from the socket's lines.
    let span = tracing::error_span!("socket", session = %row.id);
    let serve = socket::serve(state.into_inner(), viewer, after, outbox, stream);
    actix_web::rt::spawn(tracing::Instrument::instrument(serve, span));
    Ok(response)
}
