//! What the socket reports, held until just before the next paint, so a burst of frames
//! (a replayed backlog, a fast stream) is folded and rendered once per frame instead of
//! once per event.
//!
//! It only schedules: the owner keeps the queue and decides what a batch does.

use std::time::Duration;

use leptos::prelude::{document, request_animation_frame, set_timeout};
use shared::ServerFrame;

use crate::api::ConnState;

/// One report from the session's socket, in the order it happened.
pub enum Incoming {
    /// A frame the server sent.
    Frame(ServerFrame),
    /// A change of the connection's state.
    State(ConnState),
}

/// How long a batch waits at most when no animation frame comes (the tab was hidden after
/// the batch was scheduled: browsers pause animation frames in hidden tabs).
const NO_FRAME_FALLBACK: Duration = Duration::from_millis(100);

/// Calls `flush` before the next paint; at once when the tab is hidden, so a hidden tab
/// still learns at once that the agent needs its person. `flush` may run twice (the frame
/// and the fallback); it must do nothing when there is nothing new.
pub fn before_next_paint(flush: impl Fn() + Clone + 'static) {
    if document().hidden() {
        flush();
        return;
    }
    request_animation_frame(flush.clone());
    set_timeout(flush, NO_FRAME_FALLBACK);
}
