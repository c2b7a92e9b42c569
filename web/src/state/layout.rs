//! How the page is laid out right now: whether the session drawer is open on a narrow
//! screen (on a wide one the sidebar is always shown and this is ignored by the CSS).

use leptos::prelude::*;

/// The layout state shared through context.
#[derive(Clone, Copy)]
pub struct Layout {
    /// The session list slides over the page on a phone-sized screen while this is set.
    pub drawer_open: RwSignal<bool>,
}

/// Puts a fresh [`Layout`] in context and returns it.
pub fn provide_layout() -> Layout {
    let layout = Layout {
        drawer_open: RwSignal::new(false),
    };
    provide_context(layout);
    layout
}

/// The [`Layout`] from context.
pub fn use_layout() -> Layout {
    expect_context::<Layout>()
}
