//! The one rule of every text box on the page ([`crate::state::keys::submits`]): in a box
//! of words Enter sends or saves and Shift+Enter starts a new line; in a long one (JSON,
//! instructions) Enter starts a new line; Ctrl+Enter (⌘+Enter) saves in both.

use leptos::ev::KeyboardEvent;

use crate::state::keys::{self, KeyPress, TextBox};

/// A keyboard event as [`keys`] reads it.
pub fn press_of(event: &KeyboardEvent) -> KeyPress {
    KeyPress {
        key: event.key(),
        code: event.code(),
        ctrl: event.ctrl_key(),
        meta: event.meta_key(),
        alt: event.alt_key(),
        shift: event.shift_key(),
        composing: event.is_composing(),
    }
}

/// A `keydown` handler for a box of `kind`: calls `submit` (and keeps the key from adding
/// a line) when the key sends or saves.
pub fn submit_keys(
    kind: TextBox,
    submit: impl Fn() + Copy + 'static,
) -> impl Fn(KeyboardEvent) + Copy {
    move |event| {
        if keys::submits(&press_of(&event), kind) {
            event.prevent_default();
            submit();
        }
    }
}
