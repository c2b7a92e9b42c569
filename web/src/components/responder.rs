//! One interrupt card's link to the session: it sends the card's answer and knows when the
//! card may not take one — an answer is on its way, the deadline passed on this page's
//! clock, or the server refused the answer because the interrupt was already settled
//! (expired, or answered in another tab). Every control of the card reads
//! [`Responder::locked`]; none of them sends anything except through here.

use std::time::Duration;

use leptos::prelude::*;
use serde_json::Value;
use shared::{ClientFrame, ResumeStatus};

use crate::state::deadline::remaining;
use crate::state::refusal::Refusal;
use crate::state::Session;

/// A card's deadline and this page's clock, which the card's countdown keeps current.
#[derive(Clone, Copy)]
pub struct Clock {
    /// The deadline, in ms since the Unix epoch.
    pub expires_at_ms: f64,
    /// Now, in ms since the Unix epoch, as of the countdown's last tick.
    pub now_ms: RwSignal<f64>,
}

impl Clock {
    /// A clock for an RFC 3339 `expiresAt`, or `None` when there is none or it is unreadable.
    fn for_deadline(expires_at: Option<&str>) -> Option<Self> {
        let expires_at_ms = js_sys::Date::parse(expires_at?);
        expires_at_ms.is_finite().then(|| Self {
            expires_at_ms,
            now_ms: RwSignal::new(js_sys::Date::now()),
        })
    }

    /// The time left, tracked: `None` once the deadline has passed.
    pub fn left(self) -> Option<Duration> {
        remaining(self.expires_at_ms, self.now_ms.get())
    }

    /// Reads the clock again; returns whether any time is left.
    pub fn tick(self) -> bool {
        let now = js_sys::Date::now();
        self.now_ms.set(now);
        remaining(self.expires_at_ms, now).is_some()
    }
}

/// Sends one interrupt's answer and tracks whether the card may take one.
#[derive(Clone, Copy)]
pub struct Responder {
    session: Session,
    interrupt_id: StoredValue<String>,
    /// True between sending an answer and the server taking or refusing it.
    pub sent: RwSignal<bool>,
    /// Why the server refused this card's last answer, until the next one is sent.
    pub refused: RwSignal<Option<String>>,
    /// Set when the server refused this card's answer because the interrupt was already
    /// settled; the card stays read-only until the events that settled it arrive.
    pub refusal: RwSignal<Option<Refusal>>,
    /// The card's deadline, when it has one.
    pub clock: Option<Clock>,
    time_up: Memo<bool>,
}

impl Responder {
    /// A responder for one card. A refused answer gives the controls back (an error frame,
    /// remembered as [`Self::refused`]) or keeps them locked (an already settled interrupt,
    /// remembered as [`Self::refusal`]); either way only the card that sent it minds.
    pub fn new(session: Session, interrupt_id: String, expires_at: Option<&str>) -> Self {
        let clock = Clock::for_deadline(expires_at);
        let responder = Self {
            session,
            interrupt_id: StoredValue::new(interrupt_id),
            sent: RwSignal::new(false),
            refused: RwSignal::new(None),
            refusal: RwSignal::new(None),
            clock,
            time_up: Memo::new(move |_| clock.is_some_and(|clock| clock.left().is_none())),
        };
        // Both effects sync the card with frames from the socket (the outside world).
        Effect::new(move |_| {
            if let Some(error) = session.notice().get() {
                if responder.sent.get_untracked() {
                    responder.refused.set(Some(error.message));
                }
                responder.sent.set(false);
            }
        });
        Effect::new(move |_| {
            if let Some(refusal) = session.refusal().get() {
                if responder.sent.get_untracked() {
                    responder.refusal.set(Some(refusal));
                    responder.sent.set(false);
                }
            }
        });
        responder
    }

    /// Whether the deadline has passed on this page's clock (tracked).
    pub fn time_up(self) -> bool {
        self.time_up.get()
    }

    /// Whether the controls must not take an answer now (tracked): one is on its way, the
    /// time is up, or the server said the interrupt is already settled.
    pub fn locked(self) -> bool {
        self.sent.get() || self.time_up() || self.refusal.with(Option::is_some)
    }

    /// Sends `{"kind":"resume", …}` for this interrupt, unless the card is locked.
    pub fn answer(self, status: ResumeStatus, payload: Option<Value>) {
        if untrack(|| self.locked()) {
            return;
        }
        let frame = ClientFrame::Resume {
            interrupt_id: self.interrupt_id.get_value(),
            status,
            payload,
        };
        self.session.dismiss_notice();
        self.refused.set(None);
        if self.session.send(frame) {
            self.sent.set(true);
        }
    }

    /// Sends a resolved answer with this payload.
    pub fn resolve(self, payload: Value) {
        self.answer(ResumeStatus::Resolved, Some(payload));
    }
}
