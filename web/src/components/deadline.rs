//! The countdown of a pending interrupt card with a deadline: `Answer within 4:59`, amber
//! under a minute, then `Time is up…` (when the card's controls lock, see
//! [`Responder::locked`]). It owns the card's one interval timer, which lives exactly as
//! long as the countdown is on screen: it stops once the time is up and is cleared when
//! the card is answered or removed. The arithmetic is [`crate::state::deadline`]'s.

use leptos::prelude::*;

use super::responder::Responder;
use crate::state::deadline::{countdown_text, is_soon, TICK};

/// The time left to answer, for a card whose interrupt has a readable deadline.
#[component]
pub fn Countdown(responder: Responder) -> impl IntoView {
    let Some(clock) = responder.clock else {
        return ().into_any();
    };
    let timer = StoredValue::new(None::<IntervalHandle>);
    let stop = move || {
        if let Some(handle) = timer.try_update_value(Option::take).flatten() {
            handle.clear();
        }
    };
    // The clock was read when the card was made; a deadline already past needs no timer.
    if untrack(|| clock.left()).is_some() {
        let handle = set_interval_with_handle(
            move || {
                if !clock.tick() {
                    stop();
                }
            },
            TICK,
        );
        timer.set_value(handle.ok());
    }
    on_cleanup(stop);
    let left = Memo::new(move |_| clock.left());
    // Once the server has refused the answer, the card says why instead.
    let shown = move || responder.refusal.with(Option::is_none);
    view! {
        <Show when=shown>
            <p
                class="interrupt-deadline"
                class:soon=move || is_soon(left.get())
                data-testid="interrupt-deadline"
                data-state=move || if left.with(Option::is_some) { "running" } else { "up" }
                role="timer"
            >
                {move || countdown_text(left.get())}
            </p>
        </Show>
    }
    .into_any()
}
