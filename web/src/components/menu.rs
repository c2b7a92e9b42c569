//! What the header's `<details>` menus (Export, and "More") share: closing, and closing
//! when the focus leaves them. Both may be asked in a menu's last moments: a sign-out that
//! tears the header down removes a focused entry, which fires `focusout` on a menu that is
//! gone, and then there is nothing to close.

use leptos::html::Details;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Closes the menu, if it is still there.
pub fn close(menu: NodeRef<Details>) {
    if let Some(menu) = menu.try_get_untracked().flatten() {
        menu.set_open(false);
    }
}

/// Closes the menu when the focus that left something in it went outside it (or nowhere).
pub fn close_when_focus_leaves(menu: NodeRef<Details>, ev: &web_sys::FocusEvent) {
    let inside = ev
        .related_target()
        .and_then(|target| target.dyn_into::<web_sys::Node>().ok())
        .zip(menu.try_get_untracked().flatten())
        .is_some_and(|(target, menu)| menu.contains(Some(&target)));
    if !inside {
        close(menu);
    }
}
