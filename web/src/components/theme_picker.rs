//! The header's colour theme picker: system (the default), light or dark. A native select,
//! so it is reached with Tab, changed with the arrow keys and named "Theme" to a screen
//! reader. What the choice does and how it is remembered is [`crate::state::theme`]'s.

use leptos::ev;
use leptos::prelude::*;

use crate::state::theme::{self, Theme};

/// Keeps the page's theme in step with a choice made in another tab, for as long as the
/// calling component lives (the picker itself is mounted only while its menu is open).
pub fn follow_other_tabs() {
    theme::show(theme::stored());
    let listener = window_event_listener(ev::storage, move |event| {
        if event.key().as_deref() == Some(theme::STORAGE_KEY) {
            theme::show(Theme::parse(event.new_value().as_deref()));
        }
    });
    on_cleanup(move || listener.remove());
}

/// The picker; it shows the remembered choice and follows a choice made in another tab.
#[component]
pub fn ThemePicker() -> impl IntoView {
    let current = RwSignal::new(theme::stored());
    theme::show(current.get_untracked());
    let listener = window_event_listener(ev::storage, move |event| {
        if event.key().as_deref() == Some(theme::STORAGE_KEY) {
            let picked = Theme::parse(event.new_value().as_deref());
            current.set(picked);
            theme::show(picked);
        }
    });
    on_cleanup(move || listener.remove());
    view! {
        <select
            class="theme-picker"
            data-testid="theme"
            aria-label="Theme"
            title="Colour theme"
            on:change=move |ev| {
                let picked = Theme::parse(Some(&event_target_value(&ev)));
                current.set(picked);
                theme::choose(picked);
            }
        >
            {Theme::ALL
                .into_iter()
                .map(|choice| view! {
                    <option value=choice.as_str() prop:selected=move || current.get() == choice>
                        {choice.label()}
                    </option>
                })
                .collect_view()}
        </select>
    }
}
