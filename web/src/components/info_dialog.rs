//! The dialog the header's model chip opens: which model and engine this server runs,
//! Tandem's version, its MCP servers and, on the demo model, how a developer switches to a
//! real one (`TANDEM_ENGINE`). The hint lives here rather than in the header, where it
//! squeezed the title.

use leptos::html::Button;
use leptos::prelude::*;
use shared::api::{McpServerInfo, ServerInfo};
use wasm_split_helpers::wasm_split;

use super::focus_return::FocusReturn;
use super::on_first_use::{on_first_use, Loaded};

/// The dialog about the server while `open` is set (the header's model chip, or its
/// entry in the "More" menu, sets it).
#[component]
pub fn InfoDialogHost(info: ServerInfo, open: RwSignal<bool>) -> impl IntoView {
    let label = super::header_items::model_label(&info);
    view! {
        <Show when=move || open.get()>
            {
                let (info, label) = (info.clone(), label.clone());
                let back = super::focus_return::FocusReturn::capture();
                move || on_first_use(info_dialog(info.clone(), label.clone(), open, back), move || open.set(false))
            }
        </Show>
    }
}

/// The dialog, from the module fetched the first time it opens.
#[wasm_split(info_dialog, fallible, preload(preload_info_dialog))]
pub(super) fn info_dialog(
    info: ServerInfo,
    label: String,
    open: RwSignal<bool>,
    back: FocusReturn,
) -> Loaded {
    Ok(view! { <InfoDialog info label open back /> }.into_any())
}

/// The dialog itself; Escape, Close or a click beside it closes it and gives the focus
/// back to what opened it.
#[component]
fn InfoDialog(
    info: ServerInfo,
    label: String,
    open: RwSignal<bool>,
    back: FocusReturn,
) -> impl IntoView {
    let close = move || {
        open.set(false);
        back.restore();
    };
    let close_button = NodeRef::<Button>::new();
    Effect::new(move |_| {
        if let Some(button) = close_button.get() {
            let _ = button.focus();
        }
    });
    let demo = info.engine == "demo";
    view! {
        <div class="dialog-backdrop" on:click=move |_| close()>
            <div
                class="dialog"
                role="dialog"
                aria-modal="true"
                aria-labelledby="info-title"
                data-testid="info-dialog"
                on:click=|event| event.stop_propagation()
                on:keydown=move |event| if event.key() == "Escape" { close() }
            >
                <h2 id="info-title">"About this server"</h2>
                <dl class="info-list">
                    <dt>"Model"</dt>
                    <dd>{label}</dd>
                    <dt>"Engine"</dt>
                    <dd><code>{info.engine.clone()}</code></dd>
                    <dt>"Tandem"</dt>
                    <dd>{info.version.clone()}</dd>
                    {(!info.mcp_servers.is_empty()).then(|| view! {
                        <dt>"MCP servers"</dt>
                        <dd>{info.mcp_servers.iter().map(mcp_line).collect::<Vec<_>>().join(" · ")}</dd>
                    })}
                </dl>
                {demo.then(|| view! {
                    <p class="dialog-help" data-testid="engine-hint">
                        "This is the offline demo model: it acts on a few phrases, not on free text. "
                        "To use a real model, start Tandem with "<code>"TANDEM_ENGINE"</code>
                        " (or " <code>"--engine"</code> ") set to " <code>"openai"</code> " or "
                        <code>"anthropic"</code> " and the provider's settings: see “Real models” in the README."
                    </p>
                })}
                <button class="btn" node_ref=close_button on:click=move |_| close()>"Close"</button>
            </div>
        </div>
    }
}

/// One MCP server as the dialog lists it.
fn mcp_line(server: &McpServerInfo) -> String {
    if server.connected {
        format!("{}: {} tools", server.name, server.tools)
    } else {
        let why = server.error.as_deref().unwrap_or("not connected");
        format!("{}: down ({why})", server.name)
    }
}
