//! The session socket, `GET /api/sessions/{id}/ws?after=<seq>`.
//!
//! The handshake checks the session and hands the connection to [`socket::serve`],
//! which replays the log after `after`, says `caught_up`, then follows live events and
//! takes client frames. Sockets never own agent state.

mod client_frames;
mod socket;

use std::time::Duration;

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;

use crate::error::ApiError;
use crate::routes::session_id;
use crate::state::AppState;
use crate::store::Store;

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
/// Largest client frame accepted; larger ones close the socket with 1009.
pub const MAX_FRAME: usize = 64 * 1024;

/// The socket's query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocketQuery {
    #[serde(default)]
    after: u64,
}

/// Upgrades to a WebSocket after checking the session exists.
pub async fn connect<S: Store>(
    request: HttpRequest,
    body: web::Payload,
    path: web::Path<String>,
    query: web::Query<SocketQuery>,
    state: web::Data<AppState<S>>,
) -> Result<HttpResponse, ApiError> {
    let session = session_id(&path)?;
    let Some(row) = state.store.session(session).await? else {
        return Err(ApiError::SessionNotFound(session.to_string()));
    };
    // An `after` beyond the log names events that do not exist; follow from the end.
    let after = query.after.min(row.last_seq);
    let (response, ws, stream) = actix_ws::handle(&request, body)
        .map_err(|e| ApiError::BadRequest(format!("not a WebSocket request: {e}")))?;
    let stream = stream
        .max_frame_size(MAX_FRAME)
        .aggregate_continuations()
        .max_continuation_size(MAX_FRAME);
    actix_web::rt::spawn(socket::serve(
        state.into_inner(),
        session,
        after,
        ws,
        stream,
    ));
    Ok(response)
}
