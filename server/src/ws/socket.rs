//! One socket's life: backlog, `caught_up`, then a single `select!` over client frames,
//! live events and the heartbeat, until it returns a close reason.
//!
//! The live feed is subscribed before the backlog is read and anything at or below the
//! last seq sent is dropped, so there is no gap and no duplicate at the handover. A gap
//! in the live feed (the socket lagged) is filled from the log.

use std::sync::Arc;
use std::time::Instant;

use actix_ws::{AggregatedMessage, AggregatedMessageStream, CloseCode, CloseReason, Session};
use futures_util::StreamExt;
use shared::ServerFrame;
use tokio::sync::broadcast::error::RecvError;

use super::client_frames::{self, error_frame};
use crate::domain::{SessionId, UserId};
use crate::limits::SocketSlot;
use crate::state::AppState;
use crate::store::Store;

/// Events read from the log per query while catching up.
const REPLAY_PAGE: u32 = 1000;

/// Why the loop ended without a close frame to send (the peer is gone).
struct Gone;

/// Who is watching what: the session, the user acting on it, and their socket place
/// (freed when the socket ends).
pub struct Viewer {
    pub session: SessionId,
    pub user: UserId,
    pub _place: SocketSlot,
}

/// Serves the socket until either side ends it.
pub async fn serve<S: Store>(
    state: Arc<AppState<S>>,
    viewer: Viewer,
    after: u64,
    mut ws: Session,
    mut stream: AggregatedMessageStream,
) {
    let reason = match run(&state, &viewer, after, &mut ws, &mut stream).await {
        Ok(reason) => reason,
        Err(Gone) => return,
    };
    // The user's socket place is free before the close is answered, so a client that
    // waited for the close can open another at once.
    drop(viewer);
    let _ = ws.close(reason).await;
}

async fn run<S: Store>(
    state: &AppState<S>,
    viewer: &Viewer,
    after: u64,
    ws: &mut Session,
    stream: &mut AggregatedMessageStream,
) -> Result<Option<CloseReason>, Gone> {
    let session = viewer.session;
    let mut live = state.hub.subscribe(session);
    let mut sent = after;
    catch_up(state, session, &mut sent, ws).await?;
    let caught_up =
        serde_json::to_string(&ServerFrame::CaughtUp { seq: sent }).expect("frames serialise");
    ws.text(caught_up).await.map_err(|_| Gone)?;
    let mut heartbeat = tokio::time::interval(state.heartbeat.interval);
    let mut last_heard = Instant::now();
    loop {
        tokio::select! {
            message = stream.next() => {
                last_heard = Instant::now();
                match message {
                    None => return Err(Gone),
                    Some(Ok(AggregatedMessage::Text(text))) => {
                        if let Some(frame) = client_frames::handle(state, viewer, &text).await {
                            ws.text(frame).await.map_err(|_| Gone)?;
                        }
                    }
                    Some(Ok(AggregatedMessage::Binary(_))) => {
                        let frame = error_frame("invalid_frame", "binary frames are not supported; send JSON text");
                        ws.text(frame).await.map_err(|_| Gone)?;
                    }
                    Some(Ok(AggregatedMessage::Ping(bytes))) => ws.pong(&bytes).await.map_err(|_| Gone)?,
                    Some(Ok(AggregatedMessage::Pong(_))) => {}
                    Some(Ok(AggregatedMessage::Close(reason))) => return Ok(reason),
                    Some(Err(error)) => return Ok(Some(protocol_close(error))),
                }
            }
            published = live.recv() => match published {
                Ok(event) if event.seq <= sent => {}
                Ok(event) if event.seq == sent + 1 => {
                    ws.text(event.frame).await.map_err(|_| Gone)?;
                    sent = event.seq;
                }
                Ok(_) | Err(RecvError::Lagged(_)) => catch_up(state, session, &mut sent, ws).await?,
                Err(RecvError::Closed) => {
                    return Ok(Some(CloseReason { code: CloseCode::Normal, description: Some("the session was deleted".into()) }))
                }
            },
            _ = heartbeat.tick() => {
                if last_heard.elapsed() > state.heartbeat.timeout {
                    return Ok(Some(CloseReason { code: CloseCode::Policy, description: Some("heartbeat timeout".into()) }));
                }
                ws.ping(b"").await.map_err(|_| Gone)?;
            }
        }
    }
}

/// Sends every logged event after `sent`, advancing it.
async fn catch_up<S: Store>(
    state: &AppState<S>,
    session: SessionId,
    sent: &mut u64,
    ws: &mut Session,
) -> Result<(), Gone> {
    loop {
        let page = match state.store.frames_after(session, *sent, REPLAY_PAGE).await {
            Ok(page) => page,
            Err(error) => {
                tracing::error!(%error, %session, "cannot read the log for a socket");
                let frame = error_frame(
                    "storage_unavailable",
                    "the event log cannot be read right now",
                );
                let _ = ws.text(frame).await;
                return Err(Gone);
            }
        };
        let full = page.frames.len() == REPLAY_PAGE as usize;
        for frame in page.frames {
            ws.text(frame).await.map_err(|_| Gone)?;
        }
        *sent = page.last_seq;
        if !full {
            return Ok(());
        }
    }
}

fn protocol_close(error: actix_ws::ProtocolError) -> CloseReason {
    let too_big = CloseReason {
        code: CloseCode::Size,
        description: Some("the message is larger than this server accepts".into()),
    };
    match error {
        actix_ws::ProtocolError::Overflow => too_big,
        // actix-ws reports a fragmented message over the limit as this I/O error.
        actix_ws::ProtocolError::Io(io) if io.to_string().contains("continuation size") => too_big,
        // A text message that is not UTF-8 (RFC 6455 §7.4.1: 1007).
        actix_ws::ProtocolError::Io(io) if io.kind() == std::io::ErrorKind::InvalidData => {
            CloseReason {
                code: CloseCode::Invalid,
                description: Some("text messages must be valid UTF-8".into()),
            }
        }
        other => CloseReason {
            code: CloseCode::Protocol,
            description: Some(other.to_string()),
        },
    }
}
