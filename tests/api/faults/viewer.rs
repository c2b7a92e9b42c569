//! A recording viewer for the kill harness: one per session, it keeps every event frame
//! it ever received as `(seq, event JSON)` across connections, and reconnects with
//! `after=<its last seq>`.
//!
//! Each connection is read by its own task so frames keep arriving while the test sleeps
//! towards its random kill; the task ends when the server dies. Progress is published on
//! a `watch` channel so the test waits on frames, never on the clock.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;

/// Longest wait for a run to end or a dead socket to notice it.
const DEADLINE: Duration = Duration::from_secs(30);

/// Where a connection stands.
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    /// The backlog of this connection has been sent.
    pub caught_up: bool,
    pub last_seq: u64,
    /// The last event seen ends a run (or there is none yet).
    pub last_is_end: bool,
    pub closed: bool,
}

/// Everything one viewer saw.
#[derive(Default)]
struct Seen {
    frames: Vec<(u64, Value)>,
    problems: Vec<String>,
}

/// A viewer of one session.
pub struct Viewer {
    pub session: String,
    /// Shared with the connection's task. A `std::sync::Mutex`: held only to push or copy
    /// frames, never across an `.await`.
    seen: Arc<Mutex<Seen>>,
    progress: Option<watch::Receiver<Progress>>,
    task: Option<JoinHandle<()>>,
}

impl Viewer {
    /// A viewer that has seen nothing and is not connected.
    pub fn new(session: String) -> Self {
        Self {
            session,
            seen: Arc::default(),
            progress: None,
            task: None,
        }
    }

    /// The event frames received so far, in arrival order.
    pub fn frames(&self) -> Vec<(u64, Value)> {
        self.seen.lock().unwrap().frames.clone()
    }

    /// The last seq received (0 before any).
    pub fn last_seq(&self) -> u64 {
        self.seen.lock().unwrap().frames.last().map_or(0, |f| f.0)
    }

    /// Anything the viewer received that the protocol does not allow.
    pub fn problems(&self) -> Vec<String> {
        self.seen.lock().unwrap().problems.clone()
    }

    /// Connects to `address` after the last seq seen, and starts recording.
    pub async fn connect(&mut self, address: &str) {
        let (after, last_is_end) = {
            let seen = self.seen.lock().unwrap();
            let last = seen.frames.last();
            (
                last.map_or(0, |f| f.0),
                last.is_none_or(|f| is_run_end(&f.1)),
            )
        };
        let url = format!(
            "ws://{address}/api/sessions/{}/ws?after={after}",
            self.session
        );
        let (socket, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("the viewer connects");
        let (sender, receiver) = watch::channel(Progress {
            last_seq: after,
            last_is_end,
            ..Progress::default()
        });
        let seen = self.seen.clone();
        self.task = Some(tokio::spawn(record(socket, seen, sender)));
        self.progress = Some(receiver);
    }

    /// Waits until the connection has ended (the server died).
    pub async fn disconnected(&mut self) {
        if let Some(task) = self.task.take() {
            tokio::time::timeout(DEADLINE, task)
                .await
                .expect("a socket notices its server died")
                .expect("the recording task does not panic");
        }
    }

    /// Waits until this connection is caught up and the session's last event ends a run.
    pub async fn wait_run_end(&mut self) -> Progress {
        let done = |p: &Progress| p.closed || (p.caught_up && p.last_is_end);
        let Some(progress) = self.wait_until(done).await else {
            let at = *self.progress.as_ref().expect("connected").borrow();
            panic!(
                "session {}: no run end within {DEADLINE:?} (at {at:?})",
                self.session
            )
        };
        assert!(!progress.closed, "session {}: socket closed", self.session);
        progress
    }

    /// Waits until this viewer has seen, after `seq`, a `tandem.run_recovered` marker or
    /// a run end.
    pub async fn wait_continued(&mut self, seq: u64) {
        let seen = self.seen.clone();
        let continued = move || {
            let seen = seen.lock().unwrap();
            seen.frames
                .iter()
                .rev()
                .take_while(|f| f.0 > seq)
                .any(|(_, event)| {
                    is_run_end(event) || event["name"] == super::log_checks::RECOVERED
                })
        };
        let waited = self.wait_until(|p| p.closed || continued()).await;
        assert!(
            waited.is_some(),
            "session {}: neither a recovery marker nor a run end after seq {seq} within {DEADLINE:?}",
            self.session
        );
    }

    /// Waits until this connection has seen an event after `seq`.
    pub async fn wait_past(&mut self, seq: u64) {
        let waited = self.wait_until(|p| p.closed || p.last_seq > seq).await;
        assert!(
            waited.is_some(),
            "session {}: nothing after seq {seq} within {DEADLINE:?} (a queued message that never ran?)",
            self.session
        );
    }

    /// Waits up to [`DEADLINE`] for this connection's progress to satisfy `done`; `None`
    /// if it did not.
    async fn wait_until(&mut self, done: impl FnMut(&Progress) -> bool) -> Option<Progress> {
        let receiver = self.progress.as_mut().expect("connected");
        let waited = tokio::time::timeout(DEADLINE, receiver.wait_for(done)).await;
        waited.ok()?.ok().map(|progress| *progress)
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Records frames until the connection ends.
async fn record(mut socket: Socket, seen: Arc<Mutex<Seen>>, progress: watch::Sender<Progress>) {
    let mut state = *progress.borrow();
    while let Some(Ok(message)) = socket.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        let frame: Value = serde_json::from_str(&text).expect("server frames are JSON");
        let mut seen = seen.lock().unwrap();
        match frame["kind"].as_str() {
            Some("event") => {
                let seq = frame["seq"].as_u64().expect("event frames have a seq");
                if seq != state.last_seq + 1 {
                    let want = state.last_seq + 1;
                    seen.problems
                        .push(format!("seq {seq} arrived, {want} expected"));
                }
                state.last_seq = seq;
                state.last_is_end = is_run_end(&frame["event"]);
                seen.frames.push((seq, frame["event"].clone()));
            }
            Some("caught_up") if frame["seq"] == state.last_seq => state.caught_up = true,
            // The queued messages: the harness asks the server whether any wait.
            Some("queue") => {}
            _ => seen.problems.push(format!("unexpected frame {frame}")),
        }
        drop(seen);
        progress.send_replace(state);
    }
    state.closed = true;
    progress.send_replace(state);
}

/// Whether an event JSON ends a run.
pub fn is_run_end(event: &Value) -> bool {
    matches!(event["type"].as_str(), Some("RUN_FINISHED" | "RUN_ERROR"))
}
