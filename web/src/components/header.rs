//! The header of the main area: the open session's title, the connection indicator, the
//! model label from `GET /api/info` (with a hint when the demo model is running) and, when
//! the server signs people in, who is signed in and a way out.

use leptos::prelude::*;
use leptos::task::spawn_local;
use shared::api::ServerInfo;

use crate::api::rest;
use crate::state::{use_auth, use_session, use_sessions, AuthState};

/// The bar above the transcript.
#[component]
pub fn Header() -> impl IntoView {
    let session = use_session();
    let sessions = use_sessions();
    let info = RwSignal::new(None::<ServerInfo>);
    spawn_local(async move {
        match rest::server_info().await {
            Ok(found) => info.set(Some(found)),
            Err(error) => leptos::logging::warn!("GET /api/info failed: {error}"),
        }
    });
    let title = move || {
        let id = session.id.get()?;
        let title = sessions
            .sessions
            .with(|list| list.iter().find(|s| s.id == id).map(|s| s.title.clone()));
        Some(
            title
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "New session".into()),
        )
    };
    view! {
        <header class="header">
            <h1 class="header-title">{move || title().unwrap_or_else(|| "Tandem".into())}</h1>
            <Show when=move || session.id.with(Option::is_some)>
                <Connection />
            </Show>
            <div class="header-model">{move || info.get().map(model_label)}</div>
            <UserMenu />
        </header>
    }
}

fn model_label(info: ServerInfo) -> impl IntoView {
    let demo = info.engine == "demo";
    let label = if demo {
        "Demo model".to_string()
    } else {
        info.model.clone()
    };
    view! {
        <span class="model-label" data-testid="model-label" title=format!("{} · Tandem {}", info.engine, info.version)>
            {label}
        </span>
        {demo.then(|| view! {
            <span class="model-hint">"Set TANDEM_ENGINE and a provider to use a real model — see README."</span>
        })}
    }
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

/// The socket's state: connecting, live or reconnecting.
#[component]
fn Connection() -> impl IntoView {
    let session = use_session();
    let state = move || session.connection.get();
    let label = move || match state().as_str() {
        "live" => "Live",
        "reconnecting" => "Reconnecting…",
        _ => "Connecting…",
    };
    view! {
        <span class="connection" data-testid="connection" data-state=move || state().as_str()>
            <span class="connection-dot"></span>
            {label}
        </span>
    }
}
