//! One run's events as Server-Sent Events, from its `RUN_STARTED` to its `RUN_FINISHED`
//! or `RUN_ERROR`, exactly as the log holds them.
//!
//! The feed follows the log the way a socket does: it subscribes to the session's live
//! events before the run is started, reads what the log holds after a seq known to be
//! before the run, then takes live events, reading the log again for any gap (so there is
//! no gap and no duplicate). Events before the run's own `RUN_STARTED` are skipped. The
//! `threadId` of `RUN_STARTED` and `RUN_FINISHED` is the client's (the log keeps the
//! session's own id, which differs for a thread the session was derived from). A
//! client that goes away drops the feed; the run goes on. The feed ends (the response
//! body ends where it stands) the moment the caller's credential does: a revoke, a
//! sign-out, a sign-in's expiry ([`Standing`]). What the feed logs carries its session
//! and run (an `agui` span, at ERROR level so no filter drops the ids).

use std::sync::Arc;
use std::time::Duration;

use actix_web::web::Bytes;
use serde_json::Value;
use shared::{Event, EventBody};
use tokio::sync::broadcast::error::RecvError;
use tracing::Instrument;

use super::Started;
use crate::domain::SessionId;
use crate::eventlog::Subscription;
use crate::standing::Standing;
use crate::state::AppState;
use crate::store::{FramePage, Store};

/// Events read from the log per query while catching up.
const PAGE: u32 = 1000;
/// How long the feed stays silent before it sends a comment, so proxies and clients
/// keep a run that waits (for a slot, a slow tool or model) open.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Where one run's feed stands.
pub struct RunFeed<S> {
    state: Arc<AppState<S>>,
    session: SessionId,
    run_id: String,
    /// The client's `threadId`, when it is not the session's id.
    thread_id: Option<String>,
    live: Subscription,
    /// The caller's credential, which the feed lives no longer than.
    standing: Standing,
    /// The last seq looked at.
    seen: u64,
    /// Whether everything committed up to the live feed has been read from the log.
    caught_up: bool,
    started: bool,
    done: bool,
    span: tracing::Span,
}

impl<S: Store> RunFeed<S> {
    /// A feed of the started run's events, starting after its `after` (at or before the
    /// run's `RUN_STARTED`); its `live` was subscribed before the run could append. It
    /// ends when `standing` does.
    pub fn new(state: Arc<AppState<S>>, started: Started, standing: Standing) -> Self {
        let Started {
            session,
            thread_id,
            run_id,
            after,
            live,
        } = started;
        let span = tracing::error_span!("agui", session = %session, run = %run_id);
        Self {
            state,
            session,
            run_id,
            thread_id: (thread_id != session.to_string()).then_some(thread_id),
            live,
            standing,
            seen: after,
            caught_up: false,
            started: false,
            done: false,
            span,
        }
    }

    /// The next part of the response body: SSE frames, a keep-alive comment, or `None`
    /// once the run's terminal event has been sent (or the session was deleted).
    pub async fn next_chunk(&mut self) -> Option<Bytes> {
        let span = self.span.clone();
        self.chunk().instrument(span).await
    }

    async fn chunk(&mut self) -> Option<Bytes> {
        let mut out = String::new();
        while !self.done {
            if !self.caught_up {
                if !self.read_log(&mut out).await {
                    return None;
                }
            } else {
                tokio::select! {
                    published = self.live.recv() => self.take_live(published, &mut out),
                    _ = tokio::time::sleep(KEEP_ALIVE) => return Some(Bytes::from_static(b": keep-alive\n\n")),
                    ended = self.standing.ended() => {
                        tracing::info!(reason = ?ended.description, "AG-UI stream ended: its credential did");
                        self.done = true;
                        return None;
                    }
                }
                if self.done && out.is_empty() {
                    return None;
                }
            }
            if !out.is_empty() {
                return Some(Bytes::from(out));
            }
        }
        None
    }

    /// Reads one page of the log after `seen`; false if the log cannot be read.
    async fn read_log(&mut self, out: &mut String) -> bool {
        let page = self.state.store.events_after(self.session, self.seen, PAGE);
        let rows = match page.await {
            Ok(rows) => rows,
            Err(error) => {
                tracing::error!(%error, "cannot read the log for an AG-UI stream");
                return false;
            }
        };
        self.caught_up = rows.len() < PAGE as usize;
        for row in &rows {
            self.take(row.seq, &row.json, out);
            if self.done {
                break;
            }
        }
        true
    }

    /// Takes a live event and whatever else is already waiting.
    fn take_live(
        &mut self,
        first: Result<crate::eventlog::Published, RecvError>,
        out: &mut String,
    ) {
        let mut next = Some(first);
        while let Some(published) = next.take() {
            match published {
                Ok(event) if event.seq <= self.seen => {}
                Ok(event) if event.seq == self.seen + 1 => {
                    match FramePage::event_of(&event.frame) {
                        Some(json) => self.take(event.seq, json, out),
                        None => self.caught_up = false,
                    }
                }
                // A gap, or this feed fell behind: the log has what it missed.
                Ok(_) | Err(RecvError::Lagged(_)) => {
                    self.caught_up = false;
                    return;
                }
                Err(RecvError::Closed) => {
                    self.done = true;
                    return;
                }
            }
            if self.done {
                return;
            }
            next = self.live.try_recv();
        }
    }

    /// Looks at one committed event: sends it if it belongs to the run.
    fn take(&mut self, seq: u64, json: &str, out: &mut String) {
        self.seen = seq;
        let body = serde_json::from_str::<Event>(json)
            .ok()
            .map(|event| event.body);
        if !self.started {
            match &body {
                Some(EventBody::RunStarted { run_id, .. }) if *run_id == self.run_id => {
                    self.started = true
                }
                _ => return,
            }
        }
        out.push_str("data: ");
        match (&body, &self.thread_id) {
            (Some(EventBody::RunStarted { .. } | EventBody::RunFinished { .. }), Some(thread)) => {
                out.push_str(&with_thread_id(json, thread))
            }
            _ => out.push_str(json),
        }
        out.push_str("\n\n");
        if matches!(
            body,
            Some(EventBody::RunFinished { .. } | EventBody::RunError { .. })
        ) {
            self.done = true;
        }
    }
}

/// A logged event's JSON with its `threadId` set to the client's; the rest as logged
/// (keys keep their order).
fn with_thread_id(json: &str, thread: &str) -> String {
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(mut event)) => {
            event.insert("threadId".into(), Value::String(thread.into()));
            Value::Object(event).to_string()
        }
        _ => json.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clients_thread_id_replaces_the_sessions_and_nothing_else_changes() {
        let logged = r#"{"type":"RUN_STARTED","threadId":"s","runId":"r","input":{"threadId":"t","state":{}},"timestamp":1}"#;
        assert_eq!(
            with_thread_id(logged, "t"),
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","input":{"threadId":"t","state":{}},"timestamp":1}"#
        );
    }
}
