//! The header of the main area: the drawer button (small screens), the open session's
//! title (renamed in place), the connection indicator, export and share, what the
//! session's model calls used and cost so far, the MCP servers that were down, the model
//! chip from `GET /api/info` (it opens the dialog about the server), what is left of the
//! person's budget when one applies, the colour theme
//! picker and, when the server signs people in, who is signed in and a way out.

use leptos::prelude::*;
use leptos::task::spawn_local;
use shared::api::ServerInfo;
use shared::usage::UsageTotals;
use wasm_bindgen::JsCast;

use super::budget::BudgetLeft;
use super::info_dialog::ModelChip;
use super::session_title::SessionTitle;
use super::share_dialog::ShareButton;
use super::state_panel::StateButton;
use super::theme_picker::ThemePicker;
use crate::api::{rest, ConnState};
use crate::state::{usage, use_auth, use_layout, use_session, AuthState, RunState};

/// The bar above the transcript.
#[component]
pub fn Header() -> impl IntoView {
    let session = use_session();
    let info = RwSignal::new(None::<ServerInfo>);
    spawn_local(async move {
        match rest::server_info().await {
            Ok(found) => info.set(Some(found)),
            Err(error) => leptos::logging::warn!("GET /api/info failed: {error}"),
        }
    });
    let layout = use_layout();
    // With branches, what the whole conversation cost (each shared call once), read again
    // whenever a run of the open line ends.
    let conversation = RwSignal::new(None::<UsageTotals>);
    Effect::new(move |_| {
        let lines = session.branches().with(Vec::len);
        let idle = session.run().get() == RunState::Idle;
        session.usage().track();
        let id = session.id().get();
        match id {
            Some(id) if lines > 1 && idle => spawn_local(async move {
                if let Ok(found) = rest::session_usage(&id).await {
                    if session.id().get_untracked().as_deref() == Some(id.as_str()) {
                        conversation.set(Some(found));
                    }
                }
            }),
            _ if lines < 2 => conversation.set(None),
            _ => {}
        }
    });
    view! {
        <header class="header">
            <button
                class="menu-button"
                data-testid="menu"
                aria-label="Sessions"
                aria-expanded=move || layout.drawer_open.get().to_string()
                on:click=move |_| layout.drawer_open.update(|open| *open = !*open)
            >
                "☰"
            </button>
            <SessionTitle />
            <Show when=move || session.id().with(Option::is_some)>
                <Connection />
                <ExportMenu />
                <ShareButton />
                <StateButton />
            </Show>
            {move || {
                let totals = session.usage().get();
                (totals.calls > 0).then(|| view! {
                    <span class="session-usage" data-testid="session-usage" title=usage::details(&totals)>
                        {usage::summary(&totals)}
                    </span>
                })
            }}
            {move || conversation.get().filter(|totals| totals.calls > 0).map(|totals| view! {
                <span
                    class="session-usage"
                    data-testid="conversation-usage"
                    title=format!("Every branch of this conversation, each shared call once — {}", usage::details(&totals))
                >
                    {format!("all branches: {}", usage::summary(&totals))}
                </span>
            })}
            <BudgetLeft />
            {move || info.get().and_then(mcp_down)}
            <div class="header-model">
                {move || info.get().map(|info| view! { <ModelChip info /> })}
                <ThemePicker />
            </div>
            <UserMenu />
        </header>
    }
}

/// Download links of the open session: Markdown, JSON (its AG-UI events), and a zip of both
/// with the files its messages carry. The menu
/// closes once a format is picked, on Escape, and when focus leaves it.
#[component]
fn ExportMenu() -> impl IntoView {
    let session = use_session();
    let menu = NodeRef::<leptos::html::Details>::new();
    let close = move || {
        if let Some(menu) = menu.get_untracked() {
            menu.set_open(false);
        }
    };
    let link = move |format: &str| {
        let id = session.id().get().unwrap_or_default();
        format!("/api/sessions/{id}/export?format={format}")
    };
    view! {
        <details
            class="menu"
            data-testid="export"
            node_ref=menu
            on:keydown=move |ev| if ev.key() == "Escape" { close() }
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
            <summary class="btn btn-quiet">"Export"</summary>
            <div class="menu-items">
                <a href=move || link("markdown") download data-testid="export-markdown" on:click=move |_| close()>
                    "Markdown"
                </a>
                <a href=move || link("json") download data-testid="export-json" on:click=move |_| close()>
                    "JSON (AG-UI events)"
                </a>
                <a href=move || link("zip") download data-testid="export-zip" on:click=move |_| close()>
                    "Zip (both, with the files)"
                </a>
            </div>
        </details>
    }
}

/// The MCP servers that were down when the page loaded, if any (a call that finds one
/// down later says so in the transcript).
fn mcp_down(info: ServerInfo) -> Option<impl IntoView> {
    let down: Vec<_> = info
        .mcp_servers
        .into_iter()
        .filter(|s| !s.connected)
        .collect();
    if down.is_empty() {
        return None;
    }
    let names: Vec<String> = down.iter().map(|s| s.name.clone()).collect();
    let why: Vec<String> = down
        .iter()
        .map(|s| {
            format!(
                "{}: {}",
                s.name,
                s.error.as_deref().unwrap_or("not connected")
            )
        })
        .collect();
    let label = match names.len() {
        1 => format!("MCP server {} is down", names[0]),
        _ => format!("MCP servers {} are down", names.join(", ")),
    };
    Some(view! {
        <span class="mcp-down" data-testid="mcp-down" role="status" title=why.join("\n")>
            {label}
        </span>
    })
}

/// Who is signed in, and the sign-out button (not under `--auth none`).
#[component]
fn UserMenu() -> impl IntoView {
    let auth = use_auth();
    let name = move || match auth.state.get() {
        AuthState::SignedIn(user) => user.name,
        _ => String::new(),
    };
    view! {
        <Show when=move || auth.can_sign_out()>
            <div class="user-menu">
                <span class="user-name" data-testid="user-name">{name}</span>
                <button
                    class="btn btn-quiet"
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

/// How long "Caught up" shows after a reconnect before it reads "Live" again.
const CAUGHT_UP_FOR: std::time::Duration = std::time::Duration::from_secs(4);

/// The socket's state: connecting, live or reconnecting, and "caught up" for a moment
/// once a reconnect has replayed what was missed.
#[component]
pub fn Connection() -> impl IntoView {
    let session = use_session();
    let caught_up = RwSignal::new(false);
    Effect::new(move |previous: Option<ConnState>| {
        let now = session.connection().get();
        if previous == Some(ConnState::Reconnecting) && now == ConnState::Live {
            caught_up.set(true);
            set_timeout(move || caught_up.set(false), CAUGHT_UP_FOR);
        }
        now
    });
    let state = move || session.connection().get();
    let label = move || match state() {
        ConnState::Live if caught_up.get() => "Caught up",
        ConnState::Live => "Live",
        ConnState::Reconnecting => "Reconnecting…",
        ConnState::Connecting => "Connecting…",
    };
    view! {
        <span
            class="connection"
            data-testid="connection"
            role="status"
            data-state=move || state().as_str()
            class:caught-up=move || caught_up.get()
        >
            <span class="connection-dot"></span>
            {label}
        </span>
    }
}
