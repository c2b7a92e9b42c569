//! The header's "More" menu (⋯): the header's items that have no room in its row, then
//! what is always here: the instructions the model is given, the colour theme, the
//! keyboard shortcuts and, when the server signs people in, who is signed in and Sign out. It closes on Escape, when the focus leaves
//! it, and once an entry that acts is used.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::header_items::{self, HeaderData, Item};
use super::instructions_dialog::preload_instructions_dialog;
use super::on_first_use::warm;
use super::theme_picker::ThemePicker;
use crate::state::{use_auth, use_layout, AuthState};

/// The ⋯ button and its menu; the items from `inline` on are listed in it.
#[component]
pub fn MoreMenu(data: HeaderData, inline: RwSignal<usize>) -> impl IntoView {
    let layout = use_layout();
    let auth = use_auth();
    let menu = NodeRef::<leptos::html::Details>::new();
    let close = move || {
        if let Some(menu) = menu.get_untracked() {
            menu.set_open(false);
        }
    };
    let entries = Item::ALL
        .into_iter()
        .enumerate()
        .map(|(at, item)| {
            view! {
                <Show when=move || inline.get() <= at>
                    {header_items::in_menu(item, data, close)}
                </Show>
            }
        })
        .collect_view();
    let user = move || match auth.state.get() {
        AuthState::SignedIn(user) => user.name,
        _ => String::new(),
    };
    view! {
        <details
            class="menu header-more"
            data-testid="more"
            node_ref=menu
            on:keydown=move |ev| {
                if ev.key() == "Escape" {
                    close();
                    focus_button(menu);
                }
            }
            on:focusout=move |ev| {
                let inside = ev
                    .related_target()
                    .and_then(|target| target.dyn_into::<web_sys::Node>().ok())
                    .zip(menu.get_untracked())
                    .is_some_and(|(target, menu)| menu.contains(Some(&target)));
                if !inside {
                    close();
                }
            }
        >
            <summary class="btn btn-quiet more-button" aria-label="More" title="More">"⋯"</summary>
            <div class="menu-items more-items">
                {entries}
                <button
                    type="button"
                    class="more-item"
                    data-testid="instructions-button"
                    aria-haspopup="dialog"
                    on:click=move |_| {
                        close();
                        data.dialogs.instructions.set(true);
                    }
                    on:pointerenter=move |_| warm(preload_instructions_dialog)
                    on:focus=move |_| warm(preload_instructions_dialog)
                >
                    "Instructions…"
                </button>
                <label class="more-row">
                    <span>"Theme"</span>
                    <ThemePicker />
                </label>
                <button
                    type="button"
                    class="more-item"
                    data-testid="shortcuts-button"
                    on:click=move |_| {
                        close();
                        layout.shortcuts_open.set(true);
                    }
                >
                    "Keyboard shortcuts"
                </button>
                <Show when=move || auth.can_sign_out()>
                    <div class="more-user">
                        <span class="more-note">
                            "Signed in as "
                            <strong class="user-name" data-testid="user-name">{user}</strong>
                        </span>
                        <button
                            type="button"
                            class="more-item"
                            data-testid="sign-out"
                            disabled=move || auth.busy.get()
                            on:click=move |_| auth.sign_out()
                        >
                            "Sign out"
                        </button>
                    </div>
                </Show>
            </div>
        </details>
    }
}

/// Gives the focus back to the ⋯ button.
fn focus_button(menu: NodeRef<leptos::html::Details>) {
    let summary = menu
        .get_untracked()
        .and_then(|menu| menu.query_selector("summary").ok().flatten())
        .and_then(|summary| summary.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(summary) = summary {
        let _ = summary.focus();
    }
}
