//! One session's WebSocket, kept open across server restarts.
//!
//! It owns the connection to `/api/sessions/{id}/ws?after=<seq>`: it parses server frames,
//! drops event frames it has already passed on (seq at or below the last one), reconnects
//! with exponential backoff resuming from the last seq, and reports its state. It knows
//! nothing about transcripts; the owner gets frames through [`SocketHandlers`]. Dropping
//! the [`SessionSocket`] closes it for good.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use leptos::prelude::{set_timeout_with_handle, window, TimeoutHandle};
use shared::{ClientFrame, ServerFrame};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{CloseEvent, Event, MessageEvent, WebSocket};

use super::ApiError;

/// The first reconnect delay; it doubles per failed attempt.
const FIRST_BACKOFF_MS: u32 = 250;
/// The longest reconnect delay.
const MAX_BACKOFF_MS: u32 = 5_000;

/// What the connection indicator shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnState {
    /// The first connection is being made, or the backlog is still arriving.
    Connecting,
    /// Caught up with the log; events arrive as they commit.
    Live,
    /// The connection dropped; retrying.
    Reconnecting,
}

impl ConnState {
    /// The spelling used in `data-state`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Live => "live",
            Self::Reconnecting => "reconnecting",
        }
    }
}

/// The callbacks a socket reports to.
pub struct SocketHandlers {
    /// Each new frame, in order, with already-seen event frames removed.
    pub on_frame: Box<dyn Fn(ServerFrame)>,
    /// Each change of connection state.
    pub on_state: Box<dyn Fn(ConnState)>,
}

/// The JS callbacks of the current connection, kept alive while it is.
struct Callbacks {
    _open: Closure<dyn FnMut(Event)>,
    _message: Closure<dyn FnMut(MessageEvent)>,
    _close: Closure<dyn FnMut(CloseEvent)>,
}

struct Inner {
    /// The socket's path, e.g. `/api/sessions/<id>/ws`.
    path: String,
    handlers: SocketHandlers,
    last_seq: Cell<u64>,
    backoff_ms: Cell<u32>,
    disposed: Cell<bool>,
    ws: RefCell<Option<WebSocket>>,
    callbacks: RefCell<Option<Callbacks>>,
    timer: Cell<Option<TimeoutHandle>>,
}

/// A reconnecting socket for one session.
pub struct SessionSocket {
    inner: Rc<Inner>,
}

impl SessionSocket {
    /// Connects to a session's socket, asking for events after `after`.
    pub fn open(session_id: &str, after: u64, handlers: SocketHandlers) -> Self {
        Self::open_path(format!("/api/sessions/{session_id}/ws"), after, handlers)
    }

    /// Connects to the read-only socket a share link opens.
    pub fn open_shared(token: &str, after: u64, handlers: SocketHandlers) -> Self {
        Self::open_path(format!("/api/shared/{token}/ws"), after, handlers)
    }

    fn open_path(path: String, after: u64, handlers: SocketHandlers) -> Self {
        let inner = Rc::new(Inner {
            path,
            handlers,
            last_seq: Cell::new(after),
            backoff_ms: Cell::new(FIRST_BACKOFF_MS),
            disposed: Cell::new(false),
            ws: RefCell::new(None),
            callbacks: RefCell::new(None),
            timer: Cell::new(None),
        });
        (inner.handlers.on_state)(ConnState::Connecting);
        connect(&inner);
        Self { inner }
    }

    /// Sends a client frame; fails when the socket is not open right now.
    pub fn send(&self, frame: &ClientFrame) -> Result<(), ApiError> {
        let text = serde_json::to_string(frame).map_err(ApiError::bad_response)?;
        let ws = self.inner.ws.borrow();
        match ws.as_ref() {
            Some(ws) if ws.ready_state() == WebSocket::OPEN => ws
                .send_with_str(&text)
                .map_err(|_| ApiError::new("not_connected", "The message could not be sent.")),
            _ => Err(ApiError::new(
                "not_connected",
                "Not connected to the server; reconnecting…",
            )),
        }
    }
}

impl Drop for SessionSocket {
    fn drop(&mut self) {
        self.inner.disposed.set(true);
        if let Some(timer) = self.inner.timer.take() {
            timer.clear();
        }
        shut(&self.inner);
    }
}

/// Detaches the callbacks from the current connection and closes it.
fn shut(inner: &Inner) {
    if let Some(ws) = inner.ws.borrow_mut().take() {
        ws.set_onopen(None);
        ws.set_onmessage(None);
        ws.set_onclose(None);
        let _ = ws.close();
    }
    inner.callbacks.borrow_mut().take();
}

fn socket_url(path: &str, after: u64) -> String {
    let location = window().location();
    let scheme = match location.protocol().as_deref() {
        Ok("https:") => "wss",
        _ => "ws",
    };
    let host = location.host().unwrap_or_default();
    format!("{scheme}://{host}{path}?after={after}")
}

/// Opens a new connection. Runs from `open` or a timer, never from a socket callback,
/// so dropping the previous connection's callbacks here is safe.
fn connect(inner: &Rc<Inner>) {
    shut(inner);
    let url = socket_url(&inner.path, inner.last_seq.get());
    let Ok(ws) = WebSocket::new(&url) else {
        schedule_reconnect(inner);
        return;
    };
    let weak = Rc::downgrade(inner);
    let open = Closure::<dyn FnMut(Event)>::new({
        let weak = weak.clone();
        move |_| with(&weak, |inner| inner.backoff_ms.set(FIRST_BACKOFF_MS))
    });
    let message = Closure::<dyn FnMut(MessageEvent)>::new({
        let weak = weak.clone();
        move |event: MessageEvent| {
            if let Some(text) = event.data().as_string() {
                with(&weak, |inner| receive(inner, &text));
            }
        }
    });
    let close = Closure::<dyn FnMut(CloseEvent)>::new(move |event: CloseEvent| {
        if credential_ended(&event) {
            // Asking who the page is turns a 401 into the sign-in screen at once, instead
            // of reconnecting in vain until some other request is refused.
            leptos::task::spawn_local(async {
                let _ = super::rest::me().await;
            });
        }
        if let Some(inner) = weak.upgrade() {
            if !inner.disposed.get() {
                (inner.handlers.on_state)(ConnState::Reconnecting);
                schedule_reconnect(&inner);
            }
        }
    });
    ws.set_onopen(Some(open.as_ref().unchecked_ref()));
    ws.set_onmessage(Some(message.as_ref().unchecked_ref()));
    ws.set_onclose(Some(close.as_ref().unchecked_ref()));
    *inner.ws.borrow_mut() = Some(ws);
    *inner.callbacks.borrow_mut() = Some(Callbacks {
        _open: open,
        _message: message,
        _close: close,
    });
}

/// Whether the server closed the socket because the credential it was opened with ended
/// (a sign-out, a revoke, an expiry: 1008 for anything but a missed heartbeat).
fn credential_ended(event: &CloseEvent) -> bool {
    event.code() == 1008 && event.reason() != "heartbeat timeout"
}

fn with(weak: &Weak<Inner>, action: impl FnOnce(&Inner)) {
    if let Some(inner) = weak.upgrade() {
        if !inner.disposed.get() {
            action(&inner);
        }
    }
}

fn schedule_reconnect(inner: &Rc<Inner>) {
    let delay = inner.backoff_ms.get();
    inner.backoff_ms.set((delay * 2).min(MAX_BACKOFF_MS));
    let weak = Rc::downgrade(inner);
    let timer = set_timeout_with_handle(
        move || {
            if let Some(inner) = weak.upgrade() {
                inner.timer.set(None);
                if !inner.disposed.get() {
                    connect(&inner);
                }
            }
        },
        Duration::from_millis(u64::from(delay)),
    );
    if let Some(old) = inner.timer.replace(timer.ok()) {
        old.clear();
    }
}

/// Handles one text frame: dedupes events, tracks the last seq, passes the frame on.
fn receive(inner: &Inner, text: &str) {
    match serde_json::from_str::<ServerFrame>(text) {
        Ok(ServerFrame::Event { seq, .. }) if seq <= inner.last_seq.get() => {}
        Ok(frame) => {
            match &frame {
                ServerFrame::Event { seq, .. } => inner.last_seq.set(*seq),
                ServerFrame::CaughtUp { seq, .. } => {
                    inner.last_seq.set(inner.last_seq.get().max(*seq));
                    (inner.handlers.on_state)(ConnState::Live);
                }
                ServerFrame::Queue { .. } | ServerFrame::Error { .. } => {}
            }
            (inner.handlers.on_frame)(frame);
        }
        // Unknown event types parse (as `EventBody::Unknown`); only a malformed frame is here.
        Err(error) => leptos::logging::warn!("ignoring a malformed frame: {error}"),
    }
}
