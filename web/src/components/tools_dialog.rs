//! The tools the model can call, from the page: each by where it comes from (built in,
//! the server's WebAssembly tools, MCP servers, the person's own), with what it does, its
//! arguments' schema and whether a call waits for approval; and the person's own tools
//! uploaded (a manifest and a module), replaced and deleted. Its code is fetched the first
//! time it opens ([`super::on_first_use`]).

use leptos::html::Input;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;
use wasm_split_helpers::wasm_split;

use super::focus_return::FocusReturn;
use super::on_first_use::{on_first_use, Loaded};
use crate::api::rest;
use crate::state::item::pretty_json;

/// The dialog while `open` is set (the "More" menu's "Tools…" sets it).
#[component]
pub fn ToolsDialogHost(open: RwSignal<bool>) -> impl IntoView {
    view! {
        <Show when=move || open.get()>
            {
                let back = FocusReturn::capture();
                move || on_first_use(tools_dialog(open, back), move || open.set(false))
            }
        </Show>
    }
}

/// The dialog, from the module fetched the first time it opens.
#[wasm_split(tools_dialog, fallible, preload(preload_tools_dialog))]
pub(super) fn tools_dialog(open: RwSignal<bool>, back: FocusReturn) -> Loaded {
    Ok(view! { <ToolsDialog open back /> }.into_any())
}

/// One tool as the dialog shows it.
#[derive(Debug, Clone, PartialEq)]
struct Listed {
    name: String,
    source: String,
    description: String,
    schema: String,
    approval: bool,
}

impl Listed {
    fn of(tool: &Value) -> Option<Listed> {
        Some(Listed {
            name: tool["name"].as_str()?.to_string(),
            source: tool["source"].as_str()?.to_string(),
            description: tool["description"].as_str().unwrap_or_default().to_string(),
            schema: pretty_json(&tool["parameters"].to_string()),
            approval: tool["approval"].as_bool().unwrap_or(false),
        })
    }
}

/// The groups the dialog lists, in order: the source and its heading.
const GROUPS: [(&str, &str); 4] = [
    ("user", "Yours"),
    ("builtin", "Built in"),
    ("wasm", "The server's WebAssembly tools"),
    ("mcp", "From MCP servers"),
];

#[component]
fn ToolsDialog(open: RwSignal<bool>, back: FocusReturn) -> impl IntoView {
    let close = move || {
        open.set(false);
        back.restore();
    };
    let tools = RwSignal::new(None::<Vec<Listed>>);
    let uploads = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let status = RwSignal::new(None::<String>);
    let reload = move || {
        spawn_local(async move {
            match rest::tools().await {
                Ok(list) => {
                    let listed = list["tools"].as_array().into_iter().flatten();
                    tools.set(Some(listed.filter_map(Listed::of).collect()));
                    uploads.set(list["uploads"].as_bool().unwrap_or(false));
                }
                Err(why) => error.set(Some(why.message)),
            }
        });
    };
    reload();
    let form = UploadForm::default();
    let delete = move |name: String| {
        error.set(None);
        spawn_local(async move {
            match rest::delete_tool(&name).await {
                Ok(()) => {
                    status.set(Some(format!("Deleted {name}.")));
                    reload();
                }
                Err(why) => error.set(Some(why.message)),
            }
        });
    };
    let replace = move |name: String| {
        form.name.set(name);
        if let Some(input) = form.manifest.get_untracked() {
            let _ = input.focus();
        }
    };
    let groups = move || {
        let all = tools.get()?;
        let shown = GROUPS.iter().filter_map(|(source, heading)| {
            let members: Vec<Listed> = all
                .iter()
                .filter(|t| t.source == *source)
                .cloned()
                .collect();
            let own = *source == "user";
            (!members.is_empty()).then(|| {
                view! {
                    <ToolGroup heading members own delete replace />
                }
            })
        });
        Some(shown.collect_view())
    };
    view! {
        <div class="dialog-backdrop" on:click=move |_| close()>
            <div
                class="dialog dialog-wide tools-dialog"
                role="dialog"
                aria-modal="true"
                aria-labelledby="tools-title"
                data-testid="tools-dialog"
                on:click=|ev| ev.stop_propagation()
                on:keydown=move |ev| if ev.key() == "Escape" { close() }
            >
                <h2 id="tools-title">"Tools"</h2>
                <p class="dialog-help">"What the model can call in your conversations. Open one to see its arguments."</p>
                {move || tools.with(Option::is_none).then(|| view! { <p class="dialog-help" role="status">"Loading…"</p> })}
                <div class="tool-groups">{groups}</div>
                <Show when=move || uploads.get()>
                    <UploadSection form error status reload />
                </Show>
                <p class="tools-status" role="status">{move || status.get()}</p>
                {move || error.get().map(|why| view! { <p class="form-error" role="alert">{why}</p> })}
                <button class="btn" on:click=move |_| close()>"Close"</button>
            </div>
        </div>
    }
}

/// The tools of one source.
#[component]
fn ToolGroup(
    heading: &'static str,
    members: Vec<Listed>,
    own: bool,
    delete: impl Fn(String) + Copy + 'static,
    replace: impl Fn(String) + Copy + 'static,
) -> impl IntoView {
    let id = format!(
        "tools-{}",
        heading.to_lowercase().replace(' ', "-").replace('\'', "")
    );
    let labelled = id.clone();
    let rows = members
        .into_iter()
        .map(|tool| {
            let (name, deleted, replaced) = (tool.name.clone(), tool.name.clone(), tool.name.clone());
            let schema_label = format!("Arguments of {name}");
            view! {
                <li class="tool-row" data-testid="tool-row" data-tool-name=name.clone()>
                    <details>
                        <summary>
                            <code class="tool-row-name">{name.clone()}</code>
                            {tool.approval.then(|| view! { <span class="tool-row-chip">"needs approval"</span> })}
                        </summary>
                        <p class="tool-row-description">{tool.description}</p>
                        <pre class="tool-pre" tabindex="0" aria-label=schema_label>{tool.schema}</pre>
                    </details>
                    {own.then(|| view! {
                        <div class="tool-row-actions">
                            <button class="btn btn-quiet" on:click=move |_| replace(replaced.clone())
                                aria-label=format!("Replace {name}")>"Replace"</button>
                            <button class="btn btn-quiet tool-delete" on:click=move |_| delete(deleted.clone())
                                aria-label=format!("Delete {name}")>"Delete"</button>
                        </div>
                    })}
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="tool-group" aria-labelledby=labelled>
            <h3 class="dialog-subtitle" id=id>{heading}</h3>
            <ul class="tool-list">{rows}</ul>
        </section>
    }
}

/// What the upload form holds.
#[derive(Clone, Copy, Default)]
struct UploadForm {
    name: RwSignal<String>,
    manifest: NodeRef<Input>,
    module: NodeRef<Input>,
    busy: RwSignal<bool>,
}

/// The first file an `<input type=file>` holds.
fn picked(input: NodeRef<Input>) -> Option<web_sys::File> {
    input.get_untracked()?.files()?.get(0)
}

/// Uploading a tool of one's own: its name, its manifest and its module.
#[component]
fn UploadSection(
    form: UploadForm,
    error: RwSignal<Option<String>>,
    status: RwSignal<Option<String>>,
    reload: impl Fn() + Copy + 'static,
) -> impl IntoView {
    let upload = move || {
        let name = form.name.get_untracked().trim().to_string();
        let (Some(manifest), Some(module)) = (picked(form.manifest), picked(form.module)) else {
            error.set(Some(
                "Pick the manifest (.json) and the module (.wasm).".into(),
            ));
            return;
        };
        if name.is_empty() {
            error.set(Some("Name the tool.".into()));
            return;
        }
        form.busy.set(true);
        error.set(None);
        status.set(None);
        spawn_local(async move {
            match rest::upload_tool(&name, &manifest, &module).await {
                Ok(()) => {
                    status.set(Some(format!(
                        "Uploaded {name}: the model can call it from your next message."
                    )));
                    form.name.set(String::new());
                    for input in [form.manifest, form.module] {
                        if let Some(input) = input.get_untracked() {
                            input.set_value("");
                        }
                    }
                    reload();
                }
                Err(why) => error.set(Some(why.message)),
            }
            form.busy.set(false);
        });
    };
    view! {
        <section class="tool-upload" aria-labelledby="tool-upload-title">
            <h3 class="dialog-subtitle" id="tool-upload-title">"Add a tool of your own"</h3>
            <p class="dialog-help">
                "A WebAssembly module built for " <code>"wasm32-wasip1"</code>
                " (arguments on stdin, the result on stdout) and its manifest: see docs/tools.md. It runs in the sandbox, for you alone."
            </p>
            <label class="field">
                <span>"Name"</span>
                <input class="input" type="text" placeholder="word_count" autocomplete="off"
                    prop:value=move || form.name.get()
                    on:input=move |ev| form.name.set(event_target_value(&ev)) />
            </label>
            <label class="field">
                <span>"Manifest (.json)"</span>
                <input class="input" type="file" accept=".json,application/json" node_ref=form.manifest />
            </label>
            <label class="field">
                <span>"Module (.wasm)"</span>
                <input class="input" type="file" accept=".wasm,application/wasm" node_ref=form.module />
            </label>
            <button class="btn btn-primary" disabled=move || form.busy.get() on:click=move |_| upload()>
                {move || if form.busy.get() { "Uploading…" } else { "Upload" }}
            </button>
        </section>
    }
}
