//! One socket's life: backlog, `caught_up`, then a single `select!` over client frames,
//! live events, the end of its credential ([`Standing`]) and the heartbeat, until it
//! returns a close reason. Its live feed ends when the session is deleted or the process
//! stops (the hub closes every channel: close 1001).
//!
//! The live feed is subscribed before the backlog is read and anything at or below the
//! last seq sent is dropped, so there is no gap and no duplicate at the handover. A gap
//! in the live feed (the socket lagged) is filled from the log. Frames go out in batches
//! through the [`Outbox`]: a replayed page is written into it row by row as the log is
//! read and goes out as one batch, and every live event already waiting (up to [`BATCH`])
//! goes out with the one that woke the loop.

use std::sync::Arc;
use std::time::Instant;

use actix_ws::{AggregatedMessage, AggregatedMessageStream, CloseCode, CloseReason};
use bytestring::ByteString;
use futures_util::StreamExt;
use shared::queue::QueuedMessage;
use shared::ServerFrame;
use tokio::sync::broadcast::error::RecvError;

use super::client_frames::{self, error_frame};
use super::outbox::{Closed, Outbox};
use crate::domain::{SessionId, UserId};
use crate::eventlog::{Published, Subscription};
use crate::limits::SocketSlot;
use crate::standing::Standing;
use crate::state::AppState;
use crate::store::{FramePage, Store};
use crate::visibility::Visibility;

/// Events read from the log by the first query of a catch-up: small, so the first missed
/// event goes out soon.
const FIRST_REPLAY_PAGE: u32 = 1000;
/// Events read from the log per later query of a catch-up: large, since each query costs
/// a connection and a statement whatever it reads (1,000 → 4,000 took a 100,000-event
/// replay from 0.50 to 0.55–0.83 of a bare socket). A page is one batch: what a client
/// that stops reading holds in memory is a few pages (see `outbox`).
const REPLAY_PAGE: u32 = 4000;

/// Live frames sent in one batch at most: small enough that one busy session cannot hold
/// its socket's loop (and its client frames) for long.
const BATCH: usize = 256;

/// Why the loop ended without a close frame to send (the peer is gone).
struct Gone;

impl From<Closed> for Gone {
    fn from(_: Closed) -> Self {
        Gone
    }
}

/// Who is watching what: the session, the user acting on it (the owner, for a share
/// link's viewer), their socket place (freed when the socket ends) and, for a share
/// link's viewer, the link.
pub struct Viewer {
    pub session: SessionId,
    pub user: UserId,
    pub _place: SocketSlot,
    pub shared: Option<SharedView>,
}

/// A socket opened through a share link: read-only and filtered (its [`Standing`] closes
/// it once the link no longer opens the session).
pub struct SharedView {
    pub visibility: Visibility,
}

impl Viewer {
    /// Queues an event's frame as this viewer may see it.
    fn queue_event(&self, outbox: &mut Outbox, seq: u64, event_json: &str) {
        match &self.shared {
            None => outbox.queue_event(seq, event_json),
            Some(_) => self.queue(outbox, &FramePage::frame(seq, event_json)),
        }
    }

    /// Queues a frame as this viewer may see it.
    fn queue(&self, outbox: &mut Outbox, frame: &ByteString) {
        match &self.shared {
            None => outbox.queue_text(frame),
            Some(shared) => {
                if let Some(frame) = shared.visibility.frame(frame.clone()) {
                    outbox.queue_text(&frame);
                }
            }
        }
    }
}

/// Serves the socket until either side ends it, or its credential does.
pub async fn serve<S: Store>(
    state: Arc<AppState<S>>,
    (viewer, mut standing): (Viewer, Standing),
    after: u64,
    mut outbox: Outbox,
    mut stream: AggregatedMessageStream,
) {
    let live = crate::metrics::LiveSocket::opened();
    let ended = run(
        &state,
        (&viewer, &mut standing),
        after,
        &mut outbox,
        &mut stream,
    )
    .await;
    drop(live);
    let Ok(reason) = ended else {
        tracing::info!("socket ended: the client went away");
        return;
    };
    // The user's socket place is free before the close is answered, so a client that
    // waited for the close can open another at once.
    drop(viewer);
    let code = reason.as_ref().map(|r| u16::from(r.code));
    let _ = outbox.close(reason).await;
    tracing::info!(code, "socket ended: closed");
}

async fn run<S: Store>(
    state: &AppState<S>,
    (viewer, standing): (&Viewer, &mut Standing),
    after: u64,
    ws: &mut Outbox,
    stream: &mut AggregatedMessageStream,
) -> Result<Option<CloseReason>, Gone> {
    let session = viewer.session;
    let mut live = state.hub.subscribe(session);
    let mut queue = live.queue_watch();
    let mut sent = after;
    catch_up(state, viewer, &mut sent, ws).await?;
    let caught_up = ServerFrame::CaughtUp {
        seq: sent,
        queued: queued(state, viewer).await,
    };
    ws.text(&serde_json::to_string(&caught_up).expect("frames serialise"))
        .await?;
    let mut heartbeat = tokio::time::interval(state.heartbeat.interval);
    let mut last_heard = Instant::now();
    loop {
        tokio::select! {
            message = stream.next() => {
                last_heard = Instant::now();
                match message {
                    None => return Err(Gone),
                    Some(Ok(AggregatedMessage::Text(_))) if viewer.shared.is_some() => {
                        let frame = error_frame("read_only", "this is a read-only shared view; it takes no messages or answers");
                        ws.text(&frame).await?;
                    }
                    Some(Ok(AggregatedMessage::Text(text))) => {
                        match standing.before_acting(state, session).await {
                            Ok(None) => {
                                if let Some(frame) = client_frames::handle(state, viewer, &text).await {
                                    ws.text(&frame).await?;
                                }
                            }
                            Ok(Some(close)) => return Ok(Some(close)),
                            Err(error) => ws.text(&error_frame(error.code(), &error.to_string())).await?,
                        }
                    }
                    Some(Ok(AggregatedMessage::Binary(_))) => {
                        let frame = error_frame("invalid_frame", "binary frames are not supported; send JSON text");
                        ws.text(&frame).await?;
                    }
                    Some(Ok(AggregatedMessage::Ping(bytes))) => ws.pong(&bytes).await?,
                    Some(Ok(AggregatedMessage::Pong(_))) => {}
                    Some(Ok(AggregatedMessage::Close(reason))) => return Ok(reason),
                    Some(Err(error)) => {
                        crate::telemetry::client_mistake("a malformed WebSocket frame", &error);
                        return Ok(Some(protocol_close(error)));
                    }
                }
            }
            published = live.recv() => {
                if let FeedEnded::Yes = follow(state, viewer, &mut live, published, &mut sent, ws).await? {
                    return Ok(Some(feed_ended(state)));
                }
            }
            close = standing.ended() => return Ok(Some(close)),
            _ = queue.changed(), if viewer.shared.is_none() => {
                let frame = ServerFrame::Queue { queued: queued(state, viewer).await };
                ws.text(&serde_json::to_string(&frame).expect("frames serialise")).await?;
            }

            _ = heartbeat.tick() => {
                if last_heard.elapsed() > state.heartbeat.timeout {
                    return Ok(Some(CloseReason { code: CloseCode::Policy, description: Some("heartbeat timeout".into()) }));
                }
                ws.ping(b"").await?;
            }
        }
    }
}

/// The session's queued messages as its owner's sockets show them (a share link's
/// viewer gets none: they are the owner's drafts until they run). A failed read shows
/// none; the next change reads again.
async fn queued<S: Store>(state: &AppState<S>, viewer: &Viewer) -> Vec<QueuedMessage> {
    if viewer.shared.is_some() {
        return Vec::new();
    }
    match state.store.queued_messages(viewer.session).await {
        Ok(rows) => rows.iter().map(|row| row.message()).collect(),
        Err(error) => {
            tracing::warn!(%error, "could not read the queued messages");
            Vec::new()
        }
    }
}

/// Whether the live feed ended: the session was deleted, or the process is stopping.
enum FeedEnded {
    Yes,
    No,
}

/// Why the live feed ended, as the socket's close: the process is stopping (1001: the
/// page reconnects and reads on from its last seq, here after the restart or on another
/// instance), or the session was deleted.
fn feed_ended<S>(state: &AppState<S>) -> CloseReason {
    match state.lifecycle.is_halting() {
        true => CloseReason {
            code: CloseCode::Away,
            description: Some("Tandem is stopping; reconnect in a moment".into()),
        },
        false => CloseReason {
            code: CloseCode::Normal,
            description: Some("the session was deleted".into()),
        },
    }
}

/// Sends a live event and every other one already waiting (up to [`BATCH`]) as one
/// batch, skipping what was sent already; a gap (the socket lagged) is filled from the log.
async fn follow<S: Store>(
    state: &AppState<S>,
    viewer: &Viewer,
    live: &mut Subscription,
    first: Result<Published, RecvError>,
    sent: &mut u64,
    ws: &mut Outbox,
) -> Result<FeedEnded, Gone> {
    let mut next = Some(first);
    let mut taken = 0;
    while let Some(published) = next.take() {
        match published {
            Ok(event) if event.seq <= *sent => {}
            Ok(event) if event.seq == *sent + 1 => {
                viewer.queue(ws, &event.frame);
                *sent = event.seq;
            }
            Ok(_) | Err(RecvError::Lagged(_)) => {
                crate::metrics::METRICS.sockets_caught_up.inc();
                ws.flush().await?;
                catch_up(state, viewer, sent, ws).await?;
            }
            Err(RecvError::Closed) => {
                ws.flush().await?;
                return Ok(FeedEnded::Yes);
            }
        }
        taken += 1;
        if taken < BATCH {
            next = live.try_recv();
        }
    }
    ws.flush().await?;
    Ok(FeedEnded::No)
}

/// Sends every logged event after `sent`, advancing it: each page read from the log is
/// written straight into the outbox as it is read, and goes out as one batch.
async fn catch_up<S: Store>(
    state: &AppState<S>,
    viewer: &Viewer,
    sent: &mut u64,
    ws: &mut Outbox,
) -> Result<(), Gone> {
    let session = viewer.session;
    let mut limit = FIRST_REPLAY_PAGE;
    loop {
        let mut sink = |seq: u64, json: &str| viewer.queue_event(ws, seq, json);
        let replayed = match state
            .store
            .replay_after(session, *sent, limit, &mut sink)
            .await
        {
            Ok(replayed) => replayed,
            Err(error) => {
                tracing::error!(%error, %session, "cannot read the log for a socket");
                let frame = error_frame(
                    "storage_unavailable",
                    "the event log cannot be read right now",
                );
                let _ = ws.text(&frame).await;
                return Err(Gone);
            }
        };
        ws.flush().await?;
        *sent = replayed.last_seq;
        if replayed.count < limit {
            return Ok(());
        }
        limit = REPLAY_PAGE;
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
