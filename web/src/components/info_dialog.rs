//! The model chip at the header's right and the dialog it opens: which model and engine
//! this server runs, Tandem's version, its MCP servers and, on the demo model, how a
//! developer switches to a real one (`TANDEM_ENGINE`). The hint lives here rather than in
//! the header, where it squeezed the title.

use leptos::html::Button;
use leptos::prelude::*;
use shared::api::{McpServerInfo, ServerInfo};
use wasm_split_helpers::wasm_split;

use super::on_first_use::{on_first_use, warm, Loaded};

/// The chip naming the model; a click (or Enter) opens the dialog about the server.
#[component]
pub fn ModelChip(info: ServerInfo) -> impl IntoView {
    let open = RwSignal::new(false);
    let chip = NodeRef::<Button>::new();
    let demo = info.engine == "demo";
    let label = if demo {
        "Demo model".to_string()
    } else {
        info.model.clone()
    };
    view! {
        <button
            class="model-label"
            data-testid="model-label"
            aria-haspopup="dialog"
            title=format!("{label}: about this server")
            node_ref=chip
            on:click=move |_| open.set(true)
            on:pointerenter=move |_| warm(preload_info_dialog)
            on:focus=move |_| warm(preload_info_dialog)
        >
            {label.clone()}
        </button>
        <Show when=move || open.get()>
            {
                let (info, label) = (info.clone(), label.clone());
                move || on_first_use(info_dialog(info.clone(), label.clone(), open, chip), move || open.set(false))
            }
        </Show>
    }
}

/// The dialog, from the module fetched the first time it opens.
#[wasm_split(info_dialog, fallible, preload(preload_info_dialog))]
fn info_dialog(
    info: ServerInfo,
    label: String,
    open: RwSignal<bool>,
    chip: NodeRef<Button>,
) -> Loaded {
    Ok(view! { <InfoDialog info label open chip /> }.into_any())
}

/// The dialog itself; Escape, Close or a click beside it closes it and gives the focus
/// back to the chip.
#[component]
fn InfoDialog(
    info: ServerInfo,
    label: String,
    open: RwSignal<bool>,
    chip: NodeRef<Button>,
) -> impl IntoView {
    let close = move || {
        open.set(false);
        if let Some(chip) = chip.get_untracked() {
            let _ = chip.focus();
        }
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
