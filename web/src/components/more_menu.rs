//! The header's "More" menu (⋯): the header's items that have no room in its row, then
//! what is always here: the instructions the model is given, the tools it can call, the
//! colour theme, the
//! keyboard shortcuts and, when the server signs people in, who is signed in and Sign out.
//! It closes on Escape, when the focus leaves it, and once an entry that acts is used.
//!
//! Its entries are built when it opens, from a module fetched the first time (the pointer
//! over ⋯ or its focus starts the fetch): the first load of the page carries the button
//! only. The menu names the items it holds in `data-holds` (their test ids), so what is in
//! it can be known before it opens.

use leptos::html::Details;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_split_helpers::wasm_split;

use super::evals_dialog::preload_evals_dialog;
use super::header_items::{self, HeaderData, Item};
use super::instructions_dialog::preload_instructions_dialog;
use super::on_first_use::{on_first_use, warm, Loaded};
use super::schedules_dialog::preload_schedules_dialog;
use super::theme_picker::ThemePicker;
use super::tools_dialog::preload_tools_dialog;
use crate::state::{use_auth, use_layout, AuthState};

/// The ⋯ button and its menu; the items from `inline` on are listed in it.
#[component]
pub fn MoreMenu(data: HeaderData, inline: RwSignal<usize>) -> impl IntoView {
    let menu = NodeRef::<Details>::new();
    let open = RwSignal::new(false);
    let close = move || super::menu::close(menu);
    // The test ids of the items the menu holds now.
    let holds = move || {
        Item::ALL
            .into_iter()
            .skip(inline.get())
            .filter(|item| header_items::present(*item, data))
            .map(Item::test_id)
            .collect::<Vec<_>>()
            .join(" ")
    };
    view! {
        <details
            class="menu header-more"
            data-testid="more"
            data-holds=holds
            node_ref=menu
            on:toggle=move |_| open.set(menu.try_get_untracked().flatten().is_some_and(|m| m.open()))
            on:keydown=move |ev| {
                if ev.key() == "Escape" {
                    close();
                    focus_button(menu);
                }
            }
            on:focusout=move |ev| super::menu::close_when_focus_leaves(menu, &ev)
        >
            <summary
                class="btn btn-quiet more-button"
                aria-label="More"
                title="More"
                on:pointerenter=move |_| warm(preload_more_entries)
                on:focus=move |_| warm(preload_more_entries)
            >
                "⋯"
            </summary>
            <div class="menu-items more-items">
                <Show when=move || open.get()>
                    {move || on_first_use(more_entries(data, inline, menu), move || super::menu::close(menu))}
                </Show>
            </div>
        </details>
    }
}

/// The menu's entries, from the module fetched the first time it opens.
#[wasm_split(more_entries, fallible, preload(preload_more_entries))]
fn more_entries(data: HeaderData, inline: RwSignal<usize>, menu: NodeRef<Details>) -> Loaded {
    Ok(view! { <Entries data inline menu /> }.into_any())
}

#[component]
fn Entries(data: HeaderData, inline: RwSignal<usize>, menu: NodeRef<Details>) -> impl IntoView {
    let layout = use_layout();
    let auth = use_auth();
    let close = move || super::menu::close(menu);
    let items = Item::ALL
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
        {items}
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
        <button
            type="button"
            class="more-item"
            data-testid="tools-button"
            aria-haspopup="dialog"
            on:click=move |_| {
                close();
                data.dialogs.tools.set(true);
            }
            on:pointerenter=move |_| warm(preload_tools_dialog)
            on:focus=move |_| warm(preload_tools_dialog)
        >
            "Tools…"
        </button>
        <button
            type="button"
            class="more-item"
            data-testid="schedules-button"
            aria-haspopup="dialog"
            on:click=move |_| {
                close();
                data.dialogs.schedules.set(true);
            }
            on:pointerenter=move |_| warm(preload_schedules_dialog)
            on:focus=move |_| warm(preload_schedules_dialog)
        >
            "Schedules…"
        </button>
        <button
            type="button"
            class="more-item"
            data-testid="evals-button"
            aria-haspopup="dialog"
            on:click=move |_| {
                close();
                data.dialogs.evals.set(true);
            }
            on:pointerenter=move |_| warm(preload_evals_dialog)
            on:focus=move |_| warm(preload_evals_dialog)
        >
            "Evals…"
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
    }
}

/// Gives the focus back to the ⋯ button.
fn focus_button(menu: NodeRef<Details>) {
    let summary = menu
        .try_get_untracked()
        .flatten()
        .and_then(|menu| menu.query_selector("summary").ok().flatten())
        .and_then(|summary| summary.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(summary) = summary {
        let _ = summary.focus();
    }
}
