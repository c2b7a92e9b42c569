//! Keyboard shortcuts, and the dialog that lists them (Ctrl+/, or the header's menu).
//!
//! Every shortcut needs a modifier ([`crate::state::keys`] has the rules), so none ever
//! takes a character from what a person types: Ctrl+Shift+O new conversation, Shift+Esc
//! write a message, Alt+W jump to the question waiting for you (in this session, else the
//! first session that needs you), Ctrl+Shift+S open or close the session list, Ctrl+/
//! this list, Escape close it (⌘ for Ctrl on a Mac). A printable key typed with the focus
//! on nothing editable goes into the composer, whole: the composer takes the focus before
//! the character lands.

use leptos::ev;
use leptos::prelude::*;
use shared::api::SessionStatus;
use wasm_bindgen::JsCast;
use wasm_split_helpers::wasm_split;
use web_sys::{Element, HtmlElement, HtmlInputElement, KeyboardEvent};

use super::on_first_use::{on_first_use, Loaded};
use super::text_box::press_of;
use crate::state::keys::{self, Action, Focus, Shortcut};
use crate::state::route::navigate;
use crate::state::{use_layout, use_session, use_sessions, RunState};

/// Listens for the shortcuts and for typing on the bare page; renders the help dialog
/// when asked.
#[component]
pub fn Shortcuts() -> impl IntoView {
    let session = use_session();
    let sessions = use_sessions();
    let layout = use_layout();
    let help = layout.shortcuts_open;
    // Set when Alt+W opened another session: its waiting card gets focus once it renders.
    let jump_pending = RwSignal::new(false);
    let listener = window_event_listener(ev::keydown, move |event: KeyboardEvent| {
        let shortcut = match keys::action(&press_of(&event), focus_of(&event)) {
            Action::Pass => return,
            Action::Type => {
                // The composer takes the focus now; the character this key types lands
                // in the element focused once the handlers have run: the composer.
                focus_first(".composer-input");
                return;
            }
            Action::Shortcut(shortcut) => shortcut,
        };
        match shortcut {
            Shortcut::Close => {
                help.set(false);
                layout.drawer_open.set(false);
                // Escape is also the focused element's (a field's edit, a menu).
                return;
            }
            Shortcut::NewConversation => {
                sessions.start_new();
                request_animation_frame(super::composer::focus_composer);
            }
            Shortcut::WriteMessage => {
                focus_first(".composer-input");
            }
            Shortcut::JumpToQuestion => {
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
            }
            Shortcut::ToggleSessions => layout.drawer_open.update(|open| *open = !*open),
            Shortcut::Help => help.update(|open| *open = !*open),
        }
        event.prevent_default();
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
                class="dialog dialog-wide"
                role="dialog"
                aria-modal="true"
                aria-labelledby="shortcuts-title"
                data-testid="shortcuts"
                on:click=|event| event.stop_propagation()
            >
                <h2 id="shortcuts-title">"Keyboard shortcuts"</h2>
                <p class="dialog-text">
                    "Shortcuts take a modifier key, so they never take a letter you type. Anything you type while no field has the focus goes into the message box; Space still presses the button that has the focus."
                </p>
                <dl class="shortcut-list">
                    {keys::listed(on_a_mac())
                        .into_iter()
                        .map(|(keys, what)| view! { <dt><kbd>{keys}</kbd></dt><dd>{what}</dd> })
                        .collect_view()}
                </dl>
                <button class="btn" on:click=move |_| help.set(false) autofocus>"Close"</button>
            </div>
        </div>
    }
    .into_any())
}

/// Whether the page runs on a Mac (its shortcuts are written with ⌘ and ⌥).
fn on_a_mac() -> bool {
    window()
        .navigator()
        .user_agent()
        .is_ok_and(|agent| agent.contains("Mac OS") || agent.contains("Macintosh"))
}

/// What has the focus as the key is pressed, for [`keys::action`].
fn focus_of(event: &KeyboardEvent) -> Focus {
    let Some(target) = event
        .target()
        .and_then(|target| target.dyn_into::<Element>().ok())
    else {
        return Focus::Page;
    };
    if target.closest("[aria-modal=true]").ok().flatten().is_some() {
        return Focus::Dialog;
    }
    if takes_text(&target) {
        return Focus::Editable;
    }
    let role = target.get_attribute("role").unwrap_or_default();
    let tag = target.tag_name().to_ascii_lowercase();
    let control = matches!(tag.as_str(), "button" | "a" | "summary" | "input")
        || matches!(
            role.as_str(),
            "button" | "menuitem" | "option" | "radio" | "checkbox" | "switch" | "tab" | "link"
        );
    if control {
        Focus::Control
    } else {
        Focus::Page
    }
}

/// Whether `element` takes text: a text field, a textarea, a select (typing picks an
/// option) or anything editable. Checkboxes, radios and buttons do not.
fn takes_text(element: &Element) -> bool {
    if let Some(input) = element.dyn_ref::<HtmlInputElement>() {
        let kind = input.type_().to_ascii_lowercase();
        return !matches!(
            kind.as_str(),
            "checkbox"
                | "radio"
                | "button"
                | "submit"
                | "reset"
                | "file"
                | "image"
                | "range"
                | "color"
                | "hidden"
        );
    }
    let tag = element.tag_name().to_ascii_lowercase();
    matches!(tag.as_str(), "textarea" | "select")
        || element
            .dyn_ref::<HtmlElement>()
            .is_some_and(HtmlElement::is_content_editable)
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
