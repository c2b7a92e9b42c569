//! How the page is laid out right now: whether the session drawer is open on a narrow
//! screen (on a wide one the sidebar is always shown and this is ignored by the CSS), and
//! whether the shared-state panel and the list of shortcuts are shown.

use leptos::prelude::*;

/// The layout state shared through context.
#[derive(Clone, Copy)]
pub struct Layout {
    /// The session list slides over the page on a phone-sized screen while this is set.
    pub drawer_open: RwSignal<bool>,
    /// The shared-state panel is shown (when the state holds anything): beside the
    /// transcript on a wide screen, over it on a narrow one. Open from the start on a wide
    /// screen only.
    pub state_open: RwSignal<bool>,
    /// The list of keyboard shortcuts is shown (Ctrl+/, or the header's menu).
    pub shortcuts_open: RwSignal<bool>,
}

/// Puts a fresh [`Layout`] in context and returns it.
pub fn provide_layout() -> Layout {
    let layout = Layout {
        drawer_open: RwSignal::new(false),
        state_open: RwSignal::new(wide_screen()),
        shortcuts_open: RwSignal::new(false),
    };
    provide_context(layout);
    layout
}

/// Whether the window is wide enough for the state panel beside the transcript.
fn wide_screen() -> bool {
    web_sys::window()
        .and_then(|window| window.inner_width().ok())
        .and_then(|width| width.as_f64())
        .is_some_and(|width| width >= WIDE_SCREEN_PX)
}

/// From this width on the state panel stands beside the transcript (`style.css` agrees).
pub const WIDE_SCREEN_PX: f64 = 1100.0;

/// The [`Layout`] from context.
pub fn use_layout() -> Layout {
    expect_context::<Layout>()
}
