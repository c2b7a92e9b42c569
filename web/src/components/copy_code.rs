//! The copy buttons of rendered code blocks, handled by one click listener on the
//! transcript (the buttons live in Markdown HTML, which carries no listeners of its own),
//! and the clipboard write every copy button uses ([`copy_text`]).

use std::time::Duration;

use leptos::prelude::{set_timeout, window};
use wasm_bindgen::JsCast;
use web_sys::{Element, MouseEvent};

/// How long a button says "Copied" before it reads "Copy" again.
pub const COPIED_FOR: Duration = Duration::from_millis(1500);

/// Puts `text` on the clipboard. The promise settles later; a button says "Copied" at
/// once, as people expect.
pub fn copy_text(text: &str) {
    let _ = window().navigator().clipboard().write_text(text);
}

/// Copies the code of the block whose copy button was clicked; other clicks pass through.
pub fn on_click(event: MouseEvent) {
    let Some(button) = event
        .target()
        .and_then(|target| target.dyn_into::<Element>().ok())
        .and_then(|target| target.closest("button.copy-code").ok().flatten())
    else {
        return;
    };
    let code = button
        .closest(".code-block")
        .ok()
        .flatten()
        .and_then(|block| block.query_selector("code").ok().flatten())
        .and_then(|code| code.text_content())
        .unwrap_or_default();
    copy_text(&code);
    button.set_text_content(Some("Copied"));
    set_timeout(move || button.set_text_content(Some("Copy")), COPIED_FOR);
}
