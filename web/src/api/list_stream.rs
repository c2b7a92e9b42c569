//! The signed-in user's session list, live: `GET /api/sessions/stream` through the
//! browser's `EventSource`.
//!
//! The browser connects again by itself when the stream drops (a restart, a network
//! blip), and each new stream starts with a whole snapshot, so nothing is missed. When the
//! server refuses the stream outright (the sign-in ended, too many open), the browser gives
//! up; this asks who the page is (a 401 turns into the sign-in screen at once) and tries
//! again after [`RETRY_AFTER_REFUSAL`]. Dropping the [`ListStream`] closes it for good.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use leptos::prelude::{set_timeout_with_handle, TimeoutHandle};
use shared::api::SessionListEvent;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{Event, EventSource, MessageEvent};

/// How long to wait before opening the stream again after the server refused it.
const RETRY_AFTER_REFUSAL: Duration = Duration::from_secs(5);

/// The stream's path.
const PATH: &str = "/api/sessions/stream";

/// What the owner hears.
pub struct ListHandlers {
    /// Each message, in order.
    pub on_event: Box<dyn Fn(SessionListEvent)>,
    /// The stream was refused and will be tried again (`false`), or is open (`true`).
    pub on_open: Box<dyn Fn(bool)>,
}

/// The JS callbacks of the current `EventSource`, kept alive while it is.
struct Callbacks {
    _open: Closure<dyn FnMut(Event)>,
    _message: Closure<dyn FnMut(MessageEvent)>,
    _error: Closure<dyn FnMut(Event)>,
}

struct Inner {
    handlers: ListHandlers,
    source: RefCell<Option<EventSource>>,
    callbacks: RefCell<Option<Callbacks>>,
    timer: Cell<Option<TimeoutHandle>>,
    disposed: Cell<bool>,
}

/// An open session list stream.
pub struct ListStream {
    inner: Rc<Inner>,
}

impl ListStream {
    /// Opens the stream.
    pub fn open(handlers: ListHandlers) -> Self {
        let inner = Rc::new(Inner {
            handlers,
            source: RefCell::new(None),
            callbacks: RefCell::new(None),
            timer: Cell::new(None),
            disposed: Cell::new(false),
        });
        connect(&inner);
        Self { inner }
    }
}

impl Drop for ListStream {
    fn drop(&mut self) {
        self.inner.disposed.set(true);
        if let Some(timer) = self.inner.timer.take() {
            timer.clear();
        }
        shut(&self.inner);
    }
}

/// Detaches the callbacks from the current `EventSource` and closes it.
fn shut(inner: &Inner) {
    if let Some(source) = inner.source.borrow_mut().take() {
        source.set_onopen(None);
        source.set_onmessage(None);
        source.set_onerror(None);
        source.close();
    }
    inner.callbacks.borrow_mut().take();
}

/// Opens a new `EventSource`. Runs from `open` or a timer, never from its callbacks.
fn connect(inner: &Rc<Inner>) {
    shut(inner);
    let Ok(source) = EventSource::new(PATH) else {
        retry_later(inner);
        return;
    };
    let weak = Rc::downgrade(inner);
    let open = Closure::<dyn FnMut(Event)>::new({
        let weak = weak.clone();
        move |_| with(&weak, |inner| (inner.handlers.on_open)(true))
    });
    let message = Closure::<dyn FnMut(MessageEvent)>::new({
        let weak = weak.clone();
        move |event: MessageEvent| {
            let Some(text) = event.data().as_string() else {
                return;
            };
            match serde_json::from_str::<SessionListEvent>(&text) {
                Ok(event) => with(&weak, |inner| (inner.handlers.on_event)(event)),
                Err(error) => leptos::logging::warn!("a list message that does not read: {error}"),
            }
        }
    });
    let error = Closure::<dyn FnMut(Event)>::new(move |_| {
        let Some(inner) = weak.upgrade() else {
            return;
        };
        let closed = inner
            .source
            .borrow()
            .as_ref()
            .is_some_and(|source| source.ready_state() == EventSource::CLOSED);
        // While the browser reconnects by itself (`CONNECTING`), there is nothing to do.
        if closed && !inner.disposed.get() {
            (inner.handlers.on_open)(false);
            leptos::task::spawn_local(async {
                let _ = super::rest::me().await;
            });
            retry_later(&inner);
        }
    });
    source.set_onopen(Some(open.as_ref().unchecked_ref()));
    source.set_onmessage(Some(message.as_ref().unchecked_ref()));
    source.set_onerror(Some(error.as_ref().unchecked_ref()));
    *inner.source.borrow_mut() = Some(source);
    *inner.callbacks.borrow_mut() = Some(Callbacks {
        _open: open,
        _message: message,
        _error: error,
    });
}

fn retry_later(inner: &Rc<Inner>) {
    let weak = Rc::downgrade(inner);
    let timer = set_timeout_with_handle(
        move || {
            if let Some(inner) = weak.upgrade() {
                if !inner.disposed.get() {
                    connect(&inner);
                }
            }
        },
        RETRY_AFTER_REFUSAL,
    );
    if let Some(old) = inner.timer.replace(timer.ok()) {
        old.clear();
    }
}

fn with(weak: &Weak<Inner>, act: impl FnOnce(&Inner)) {
    if let Some(inner) = weak.upgrade() {
        if !inner.disposed.get() {
            act(&inner);
        }
    }
}
