//! Sharing the open session: a read-only link, with the reasoning, the tool arguments, the
//! files or the shared state hidden and the instructions shown if the person chooses (the
//! server enforces it), the link shown once to copy, and the session's links listed to
//! delete.

use leptos::prelude::*;
use leptos::task::spawn_local;
use shared::sharing::{CreateShare, Share};
use wasm_split_helpers::wasm_split;

use super::focus_return::FocusReturn;
use super::on_first_use::{on_first_use, Loaded};
use crate::api::rest;
use crate::state::use_session;

/// The share dialog while `open` is set (the header's Share button, or its entry in the
/// "More" menu, sets it); closing it gives the focus back to what opened it.
#[component]
pub fn ShareDialogHost(open: RwSignal<bool>) -> impl IntoView {
    view! {
        <Show when=move || open.get()>
            {
                let back = FocusReturn::capture();
                move || on_first_use(share_dialog(open, back), move || open.set(false))
            }
        </Show>
    }
}

/// The dialog, from the module fetched the first time it opens.
#[wasm_split(share_dialog, fallible, preload(preload_share_dialog))]
pub(super) fn share_dialog(open: RwSignal<bool>, back: FocusReturn) -> Loaded {
    Ok(view! { <ShareDialog open back /> }.into_any())
}

#[component]
fn ShareDialog(open: RwSignal<bool>, back: FocusReturn) -> impl IntoView {
    let close = move || {
        open.set(false);
        back.restore();
    };
    let session = use_session();
    let id = session.id().get_untracked().unwrap_or_default();
    let hide_reasoning = RwSignal::new(false);
    let hide_arguments = RwSignal::new(false);
    let hide_attachments = RwSignal::new(false);
    let hide_state = RwSignal::new(false);
    let show_instructions = RwSignal::new(false);
    let created = RwSignal::new(None::<String>);
    let links = RwSignal::new(Vec::<Share>::new());
    let error = RwSignal::new(None::<String>);
    let id = StoredValue::new(id);
    // Each request reads the session's id when it is made: an answer may come after the
    // dialog closed, and then only its own signals are written (which do nothing then).
    let reload = move || {
        let Some(session) = id.try_get_value() else {
            return;
        };
        spawn_local(async move {
            match rest::list_shares(&session).await {
                Ok(found) => links.set(found),
                Err(e) => error.set(Some(e.message)),
            }
        })
    };
    reload();
    let create = move |_| {
        let hide = CreateShare {
            hide_reasoning: hide_reasoning.get_untracked(),
            hide_tool_arguments: hide_arguments.get_untracked(),
            attachments: !hide_attachments.get_untracked(),
            state: !hide_state.get_untracked(),
            instructions: show_instructions.get_untracked(),
        };
        let session = id.get_value();
        spawn_local(async move {
            match rest::create_share(&session, hide).await {
                Ok(share) => {
                    let origin = window().location().origin().unwrap_or_default();
                    created.set(Some(format!("{origin}{}", share.path)));
                    reload();
                }
                Err(e) => error.set(Some(e.message)),
            }
        });
    };
    let copy = move |_| {
        if let Some(link) = created.get_untracked() {
            let _ = window().navigator().clipboard().write_text(&link);
        }
    };
    view! {
        <div class="dialog-backdrop" on:click=move |_| close()>
            <div
                class="dialog"
                role="dialog"
                aria-modal="true"
                aria-labelledby="share-title"
                data-testid="share-dialog"
                on:click=|ev| ev.stop_propagation()
                on:keydown=move |ev| if ev.key() == "Escape" { close() }
            >
                <h2 id="share-title">"Share a read-only link"</h2>
                <p class="dialog-help">
                    "Anyone with the link sees this session live, without signing in, and cannot change it."
                </p>
                <ShareOption value=hide_reasoning test_id="hide-reasoning" label="Hide the agent's reasoning" />
                <ShareOption value=hide_arguments test_id="hide-arguments" label="Hide the arguments of tool calls" />
                <ShareOption value=hide_attachments test_id="hide-attachments" label="Hide attached files and images" />
                <ShareOption value=hide_state test_id="hide-state" label="Hide the shared state" />
                <ShareOption value=show_instructions test_id="show-instructions" label="Show the instructions the model was given" />
                <button class="btn btn-primary" data-testid="create-link" on:click=create>
                    "Create link"
                </button>
                {move || created.get().map(|link| view! {
                    <div class="share-link">
                        <input class="input" readonly aria-label="Share link" data-testid="share-link" prop:value=link />
                        <button class="btn" on:click=copy>"Copy"</button>
                    </div>
                    <p class="dialog-help">"Copy it now: it is not shown again."</p>
                })}
                {move || error.get().map(|e| view! { <p class="form-error" role="alert">{e}</p> })}
                <ShareList links id reload />
                <button class="btn" on:click=move |_| close()>"Close"</button>
            </div>
        </div>
    }
}

/// One checkbox of what the link shows.
#[component]
fn ShareOption(value: RwSignal<bool>, test_id: &'static str, label: &'static str) -> impl IntoView {
    view! {
        <label class="field-check">
            <input type="checkbox" data-testid=test_id
                prop:checked=move || value.get()
                on:change=move |ev| value.set(event_target_checked(&ev)) />
            {label}
        </label>
    }
}

/// The session's links, each with what it hides and a Delete button.
#[component]
fn ShareList(
    links: RwSignal<Vec<Share>>,
    id: StoredValue<String>,
    reload: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <Show when=move || links.with(|l| !l.is_empty())>
            <h3 class="dialog-subtitle">"Links of this session"</h3>
            <ul class="share-list" data-testid="share-list">
                <For
                    each=move || links.get()
                    key=|share| share.id.clone()
                    children=move |share: Share| {
                        let share_id = share.id.clone();
                        let remove = move |_| {
                            let share_id = share_id.clone();
                            let session = id.get_value();
                            spawn_local(async move {
                                if rest::delete_share(&session, &share_id).await.is_ok() {
                                    reload();
                                }
                            });
                        };
                        view! {
                            <li>
                                <span>{describe(&share)}</span>
                                <button class="btn btn-quiet" data-testid="delete-link" on:click=remove>
                                    "Delete"
                                </button>
                            </li>
                        }
                    }
                />
            </ul>
        </Show>
    }
}

fn describe(share: &Share) -> String {
    let hidden: Vec<&str> = [
        (share.hide_reasoning, "reasoning"),
        (share.hide_tool_arguments, "tool arguments"),
        (!share.attachments, "attachments"),
        (!share.state, "the shared state"),
        (!share.instructions, "the instructions"),
    ]
    .into_iter()
    .filter_map(|(hidden, what)| hidden.then_some(what))
    .collect();
    match hidden.as_slice() {
        [] => "Shows everything".into(),
        [one] => format!("Hides {one}"),
        [first @ .., last] => format!("Hides {} and {last}", first.join(", ")),
    }
}
