//! Keyboard shortcuts, and the dialog that lists them (`?`).
//!
//! Single keys, as on GitHub or Gmail, taken only when the focus is on no text field, no
//! text is being composed (an input method) and no modifier is held, so they never steal a
//! keystroke from the composer or a form: `n` new conversation, `/` focus the composer, `w`
//! jump to the question waiting for you (in this session, else the first session that
//! needs you), `[` open or close the session list, `?` this list, `Escape` close it. Any
//! other character typed on the bare page goes into the composer.

use leptos::ev;
use leptos::prelude::*;
use shared::api::SessionStatus;
use wasm_bindgen::JsCast;
use wasm_split_helpers::wasm_split;
use web_sys::{HtmlElement, KeyboardEvent};

use super::on_first_use::{on_first_use, Loaded};
use crate::state::route::navigate;
use crate::state::{use_layout, use_session, use_sessions, RunState};

/// The shortcuts as the help dialog lists them.
const KEYS: [(&str, &str); 6] = [
    ("n", "Start a new conversation"),
    ("/", "Write a message"),
    ("w", "Jump to the question waiting for you"),
    ("[", "Show or hide the session list (small screens)"),
    ("?", "Show these shortcuts"),
    ("Esc", "Close this list or the session list (anywhere)"),
];

/// Listens for the shortcuts; renders the help dialog when asked.
#[component]
pub fn Shortcuts() -> impl IntoView {
    let session = use_session();
    let sessions = use_sessions();
    let layout = use_layout();
    let help = RwSignal::new(false);
    // Set when `w` opened another session: its waiting card gets focus once it renders.
    let jump_pending = RwSignal::new(false);
    let listener = window_event_listener(ev::keydown, move |event: KeyboardEvent| {
        if event.key() == "Escape" {
            help.set(false);
            layout.drawer_open.set(false);
            return;
        }
        if event.ctrl_key()
            || event.meta_key()
            || event.alt_key()
            || event.is_composing()
            || is_typing(&event)
        {
            return;
        }
        let handled = match event.key().as_str() {
            "n" => {
                sessions.start_new();
                request_animation_frame(super::composer::focus_composer);
                true
            }
            "/" => focus_first(".composer-input"),
            "w" => {
                if !focus_waiting_card() {
                    let waiting = sessions.sessions.with_untracked(|list| {
                        list.iter()
                            .find(|s| s.status == SessionStatus::AwaitingInput)
                            .map(|s| s.id.clone())
                    });
                    if let Some(id) = waiting {
                        jump_pending.set(true);
                        navigate(Some(&id));
                    }
                }
                true
            }
            "[" => {
                layout.drawer_open.update(|open| *open = !*open);
                true
            }
            "?" => {
                help.update(|open| *open = !*open);
                true
            }
            // Typing on the bare page writes a message: the character goes to the composer.
            key if key.chars().count() == 1 && !help.get_untracked() => {
                focus_first(".composer-input");
                false
            }
            _ => false,
        };
        if handled {
            event.prevent_default();
        }
    });
    on_cleanup(move || listener.remove());
    Effect::new(move |_| {
        session.tick().track();
        if jump_pending.get_untracked()
            && session.run().get() == RunState::Awaiting
            && focus_waiting_card()
        {
            jump_pending.set(false);
        }
    });
    view! {
        <Show when=move || help.get()>
            {move || on_first_use(shortcuts_dialog(help), move || help.set(false))}
        </Show>
    }
}

/// The help dialog, from the module fetched the first time it opens.
#[wasm_split(shortcuts_dialog, fallible)]
fn shortcuts_dialog(help: RwSignal<bool>) -> Loaded {
    Ok(view! {
        <div class="dialog-backdrop" on:click=move |_| help.set(false)>
            <div
                class="dialog"
                role="dialog"
                aria-modal="true"
                aria-labelledby="shortcuts-title"
                data-testid="shortcuts"
                on:click=|event| event.stop_propagation()
            >
                <h2 id="shortcuts-title">"Keyboard shortcuts"</h2>
                <p class="dialog-text">
                    "Single keys work when you are not typing in a field; anything else you type on the page goes into the message box."
                </p>
                <dl class="shortcut-list">
                    {KEYS
                        .iter()
                        .map(|(key, what)| view! { <dt><kbd>{*key}</kbd></dt><dd>{*what}</dd> })
                        .collect_view()}
                </dl>
                <button class="btn" on:click=move |_| help.set(false)>"Close"</button>
            </div>
        </div>
    }
    .into_any())
}

/// Whether the key goes to a text field (or any editable element) the person is using.
fn is_typing(event: &KeyboardEvent) -> bool {
    let Some(target) = event
        .target()
        .and_then(|target| target.dyn_into::<HtmlElement>().ok())
    else {
        return false;
    };
    let tag = target.tag_name().to_ascii_lowercase();
    matches!(tag.as_str(), "input" | "textarea" | "select") || target.is_content_editable()
}

/// Focuses the first element matching `selector`; whether there was one.
fn focus_first(selector: &str) -> bool {
    let found = document()
        .query_selector(selector)
        .ok()
        .flatten()
        .and_then(|element| element.dyn_into::<HtmlElement>().ok());
    match found {
        Some(element) => element.focus().is_ok(),
        None => false,
    }
}

/// Scrolls to the unanswered question card and focuses its first control.
fn focus_waiting_card() -> bool {
    let Some(card) = document()
        .query_selector("[data-testid=interrupt][data-state=pending]")
        .ok()
        .flatten()
    else {
        return false;
    };
    card.scroll_into_view();
    let control = card
        .query_selector("input:not([disabled]), textarea:not([disabled]), button:not([disabled])")
        .ok()
        .flatten()
        .and_then(|element| element.dyn_into::<HtmlElement>().ok());
    if let Some(control) = control {
        let _ = control.focus();
    }
    true
}
