//! The shared state beside the conversation: a plan (`{"plan": [{step, status}]}`) as a
//! checklist the person ticks off, the rest as a readable tree, and the whole document
//! editable as JSON. It shows only when the state holds something: beside the transcript
//! on a wide screen, over it on a narrow one, toggled by the header's button. A share
//! link's viewer sees it read-only (when the link shows it).

use leptos::prelude::*;
use serde_json::Value;
use shared::state::{plan, PlanStep};
use wasm_split_helpers::wasm_split;

use super::on_first_use::{on_first_use, warm, Loaded};
use super::text_box::submit_keys;
use crate::state::keys::TextBox;

use crate::state::layout::Layout;
use crate::state::shared_state::StateEditor;
use crate::state::use_session;

/// What the header's button says: the plan's progress, or "State".
pub fn state_label(state: &Value) -> String {
    match plan(state) {
        Some(steps) if !steps.is_empty() => {
            let done = steps.iter().filter(|step| step.is_done()).count();
            format!("Plan {done}/{}", steps.len())
        }
        _ => "State".into(),
    }
}

/// The header's toggle of the panel, shown while the state holds something.
#[component]
pub fn StateButton() -> impl IntoView {
    let session = use_session();
    let layout = expect_context::<Layout>();
    let filled = move || {
        session
            .shared_state()
            .with(|state| !shared::state::is_empty(state))
    };
    view! {
        <Show when=filled>
            <button
                type="button"
                class="btn btn-quiet state-button"
                data-testid="state-button"
                aria-controls="state-panel"
                aria-expanded=move || layout.state_open.get().to_string()
                on:click=move |_| layout.state_open.update(|open| *open = !*open)
                on:pointerenter=move |_| warm(preload_state_panel)
                on:focus=move |_| warm(preload_state_panel)
            >
                {move || session.shared_state().with(state_label)}
            </button>
        </Show>
    }
}

/// The panel, when the state holds something and the panel is open (always open for a
/// share link's viewer, whose page has no toggle).
#[component]
pub fn StatePanel() -> impl IntoView {
    let session = use_session();
    let layout = use_context::<Layout>();
    let shown = move || {
        let open = layout.is_none_or(|layout| layout.state_open.get());
        open && session
            .shared_state()
            .with(|state| !shared::state::is_empty(state))
    };
    view! {
        <Show when=shown>
            {move || on_first_use(state_panel(layout), move || hide(layout))}
        </Show>
    }
}

/// Closes the panel (a share link's viewer has no layout: its panel stays).
fn hide(layout: Option<Layout>) {
    if let Some(layout) = layout {
        layout.state_open.set(false);
    }
}

/// The panel's content, from the module fetched the first time it opens.
#[wasm_split(state_panel, fallible, preload(preload_state_panel))]
fn state_panel(layout: Option<Layout>) -> Loaded {
    Ok(view! { <Panel layout /> }.into_any())
}

/// The panel's content: the plan, the rest of the state, and the JSON editor.
#[component]
fn Panel(layout: Option<Layout>) -> impl IntoView {
    let session = use_session();
    let editor = StateEditor::new(session);
    let editing = RwSignal::new(false);
    view! {
        <aside class="state-panel" id="state-panel" data-testid="state-panel" aria-label="Shared state">
            <div class="state-panel-head">
                <h2 class="state-panel-title">"Shared state"</h2>
                <Show when=move || layout.is_some()>
                    <button type="button" class="icon-button" aria-label="Hide the shared state" on:click=move |_| hide(layout)>
                        "×"
                    </button>
                </Show>
            </div>
            {move || {
                let state = session.shared_state().get();
                plan(&state).filter(|steps| !steps.is_empty()).map(|steps| view! { <Plan steps editor /> })
            }}
            <Show
                when=move || editing.get()
                fallback=move || view! { <Other /> }
            >
                <JsonEditor editor editing />
            </Show>
            {move || editor.error.get().map(|why| view! {
                <p class="state-error" role="alert" data-testid="state-error">{why}</p>
            })}
            <Show when=move || !session.read_only && !editing.get()>
                <button type="button" class="btn btn-quiet state-edit" on:click=move |_| {
                    editor.error.set(None);
                    editing.set(true);
                }>
                    "Edit as JSON"
                </button>
            </Show>
        </aside>
    }
}

/// The plan as a checklist.
#[component]
fn Plan(steps: Vec<PlanStep>, editor: StateEditor) -> impl IntoView {
    let session = use_session();
    let done = steps.iter().filter(|step| step.is_done()).count();
    let total = steps.len();
    let rows = steps
        .into_iter()
        .enumerate()
        .map(|(index, step)| {
            let checked = step.is_done();
            let label = step.step.clone();
            let status = match step.status.as_str() {
                "in_progress" => Some("in progress".to_string()),
                "pending" | "done" | "completed" | "complete" => None,
                other => Some(other.replace('_', " ")),
            };
            let toggle = move |ev: leptos::ev::Event| {
                editor.set_done(index, &step, event_target_checked(&ev));
            };
            view! {
                <li class="plan-step" class:plan-step-done=checked>
                    <label>
                        <input
                            type="checkbox"
                            prop:checked=checked
                            disabled=move || session.read_only || editor.busy.get()
                            on:change=toggle
                        />
                        <span class="plan-step-text">{label}</span>
                    </label>
                    {status.map(|status| view! { <span class="plan-step-status">{status}</span> })}
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="plan" aria-label="Plan">
            <h3 class="state-section-title">"Plan " <span class="plan-progress">{format!("{done} of {total} done")}</span></h3>
            <ul class="plan-steps" role="list">{rows}</ul>
        </section>
    }
}

/// What the state holds besides a plan, as a tree.
#[component]
fn Other() -> impl IntoView {
    let session = use_session();
    move || {
        let mut state = session.shared_state().get();
        if plan(&state).is_some_and(|steps| !steps.is_empty()) {
            if let Some(object) = state.as_object_mut() {
                object.shift_remove("plan");
            }
        }
        (!shared::state::is_empty(&state)).then(|| {
            view! {
                <section class="state-tree-section" aria-label="State">
                    {tree(&state)}
                </section>
            }
        })
    }
}

/// A JSON value as nested lists of names and values.
fn tree(value: &Value) -> AnyView {
    match value {
        Value::Object(object) => {
            let entries = object
                .iter()
                .map(|(key, value)| {
                    view! {
                        <dt class="state-key">{key.clone()}</dt>
                        <dd class="state-entry">{tree(value)}</dd>
                    }
                })
                .collect_view();
            view! { <dl class="state-tree">{entries}</dl> }.into_any()
        }
        Value::Array(items) if items.is_empty() => {
            view! { <span class="state-empty">"(empty list)"</span> }.into_any()
        }
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|item| view! { <li>{tree(item)}</li> })
                .collect_view();
            view! { <ol class="state-items">{items}</ol> }.into_any()
        }
        Value::String(text) => view! { <span class="state-text">{text.clone()}</span> }.into_any(),
        Value::Null => view! { <span class="state-empty">"null"</span> }.into_any(),
        other => view! { <span class="state-scalar">{other.to_string()}</span> }.into_any(),
    }
}

/// The whole state as JSON text, to change and save at once.
#[component]
fn JsonEditor(editor: StateEditor, editing: RwSignal<bool>) -> impl IntoView {
    let session = use_session();
    let start = session
        .shared_state()
        .with_untracked(|state| serde_json::to_string_pretty(state).unwrap_or_default());
    let draft = RwSignal::new(start);
    let replace = move || {
        if editor.replace_all(&draft.get_untracked()) {
            editing.set(false);
        }
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        replace();
    };
    view! {
        <form class="state-json" on:submit=save>
            <textarea
                class="input state-json-text"
                aria-label="The shared state as JSON"
                spellcheck="false"
                prop:value=move || draft.get()
                on:input=move |ev| draft.set(event_target_value(&ev))
                on:keydown=submit_keys(TextBox::Long, replace)
            ></textarea>
            <div class="message-editor-actions">
                <button type="button" class="btn btn-quiet" on:click=move |_| editing.set(false)>"Cancel"</button>
                <button type="submit" class="btn">"Save"</button>
            </div>
        </form>
    }
}
