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
//!
//! Every socket closes (1008) the moment the credential it was opened with ends: a
//! sign-out, a revoke, a sign-in's expiry, a deleted share link ([`crate::standing`]).

pub mod client_frames;
mod outbox;
mod socket;

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use crate::access::{owned_session, share_of, visibility};
use crate::auth::{Auth, Caller, EndingsWatch, Reliance};
use crate::domain::{TokenHash, UserId};
use crate::error::ApiError;
use crate::limits::{SocketOwner, SocketSlot};
use crate::standing::Standing;
use crate::state::AppState;
use crate::store::{SessionRow, Store};

/// The socket's query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SocketQuery {
    /// Replay events after this seq, then follow live.
    #[serde(default)]
    #[param(required = false)]
    after: u64,
}

/// Upgrades to a WebSocket after checking the session is the caller's.
#[utoipa::path(get, path = "/api/sessions/{id}/ws", tag = "sessions", params(SocketQuery),
    responses(
        (status = 101, description = "Upgraded to the session's WebSocket (docs/protocol.md)"),
        (status = 429, description = "Too many open sockets", body = shared::api::ErrorBody),
    )
)]
pub async fn connect<S: Store>(
    request: HttpRequest,
    body: web::Payload,
    (caller, auth): (Caller, web::Data<Auth>),
    path: web::Path<String>,
    query: web::Query<SocketQuery>,
    state: web::Data<AppState<S>>,
) -> Result<HttpResponse, ApiError> {
    let row = owned_session(&state, &caller, &path).await?;
    let place = state.sockets.open(&[SocketOwner::User(caller.user)])?;
    // Watch for endings before the credential's last check, so that one ending in
    // between cannot be missed.
    let watch = state.endings.watch();
    if !auth.still_valid(&caller).await? {
        return Err(ApiError::Unauthorized);
    }
    let reliance = Reliance::Caller(caller.clone());
    let standing = Standing::new(
        reliance,
        watch,
        (**auth).clone(),
        state.clone().into_inner(),
        row.id,
    );
    let opened = Opened {
        row,
        user: caller.user,
        place,
        standing,
    };
    upgrade(request, body, state, opened, query.after, None)
}

/// Upgrades to a read-only WebSocket of the session a share link opens, with what the
/// link hides removed from every event. Viewers are capped per session (all its links
/// together, `--viewer-sockets-per-session`) and per owner (`--viewer-sockets-per-owner`),
/// apart from the owner's own sockets.
#[utoipa::path(get, path = "/api/shared/{token}/ws", tag = "sharing", params(SocketQuery),
    responses(
        (status = 101, description = "Upgraded to the shared session's read-only WebSocket"),
        (status = 404, description = "No such share link", body = shared::api::ErrorBody),
        (status = 429, description = "Too many viewers of this session, or of its owner's sessions, through share links", body = shared::api::ErrorBody),
    )
)]
pub async fn connect_shared<S: Store>(
    request: HttpRequest,
    body: web::Payload,
    (path, auth): (web::Path<String>, web::Data<Auth>),
    query: web::Query<SocketQuery>,
    state: web::Data<AppState<S>>,
) -> Result<HttpResponse, ApiError> {
    // Watch for endings before the link is checked (see `connect`).
    let watch: EndingsWatch = state.endings.watch();
    let (share, row) = share_of(&state, &path).await?;
    let shared = socket::SharedView {
        visibility: visibility(&share),
    };
    let place = state.sockets.open(&[
        SocketOwner::SharedSession(row.id),
        SocketOwner::SharedBy(row.owner),
    ])?;
    let reliance = Reliance::ShareLink {
        id: share.id,
        token: TokenHash::of(&path),
        owner: row.owner,
    };
    let session = row.id;
    let standing = Standing::new(
        reliance,
        watch,
        (**auth).clone(),
        state.clone().into_inner(),
        session,
    );
    let opened = Opened {
        user: row.owner,
        row,
        place,
        standing,
    };
    upgrade(request, body, state, opened, query.after, Some(shared))
}

/// A socket about to be upgraded: its session, the user it acts for (the owner, for a
/// share link), its place among the open sockets and its standing.
struct Opened {
    row: SessionRow,
    user: UserId,
    place: SocketSlot,
    standing: Standing,
}

/// Upgrades and spawns the socket's loop, holding the socket's place.
fn upgrade<S: Store>(
    request: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState<S>>,
    opened: Opened,
    after: u64,
    shared: Option<socket::SharedView>,
) -> Result<HttpResponse, ApiError> {
    let Opened {
        row,
        user,
        place,
        standing,
    } = opened;
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
    let serve = socket::serve(
        state.into_inner(),
        (viewer, standing),
        after,
        outbox,
        stream,
    );
    // Runs the socket starts join the trace its handshake came with.
    let serve = crate::traces::with_parent(crate::traces::request_parent(), serve);
    actix_web::rt::spawn(tracing::Instrument::instrument(serve, span));
    Ok(response)
}
