//! The model chip at the header's right and the dialog it opens: which model and engine
//! this server runs, Tandem's version, its MCP servers and, on the demo model, how a
//! developer switches to a real one (`TANDEM_ENGINE`). The hint lives here rather than in
//! the header, where it squeezed the title.

use leptos::html::Button;
use leptos::prelude::*;
use shared::api::{McpServerInfo, ServerInfo};

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
    let close = move || {
        open.set(false);
        if let Some(chip) = chip.get_untracked() {
            let _ = chip.focus();
        }
    };
    view! {
        <button
            class="model-label"
            data-testid="model-label"
            aria-haspopup="dialog"
            title=format!("{label}: about this server")
            node_ref=chip
            on:click=move |_| open.set(true)
        >
            {label.clone()}
        </button>
        <Show when=move || open.get()>
            <InfoDialog info=info.clone() label=label.clone() close />
        </Show>
    }
}

/// The dialog itself; Escape, Close or a click beside it closes it.
#[component]
fn InfoDialog(
    info: ServerInfo,
    label: String,
    close: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
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
