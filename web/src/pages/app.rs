//! The root component: asks who the page acts for and shows the sign-in screen or the
//! workspace. The workspace provides the session list and the open session to everything
//! below, keeps the open session in step with the URL hash, and keeps the list fresh; it
//! is built afresh on every sign-in and torn down (sockets closed) on sign-out.

use std::time::Duration;

use leptos::prelude::*;

use super::session::SessionPage;
use super::shared::SharedPage;
use crate::components::{Header, NeedsYou, Shortcuts, Sidebar, SignIn, UndoDelete};
use crate::state::route::shared_link;
use crate::state::route::use_route;
use crate::state::{provide_auth, provide_layout, provide_session, provide_sessions, AuthState};

/// How often the session list is reloaded so badges of other sessions stay right.
const LIST_REFRESH: Duration = Duration::from_secs(3);

/// The whole page: a share link's read-only view, or the signed-in workspace.
#[component]
pub fn App() -> impl IntoView {
    if let Some(token) = shared_link() {
        return view! { <SharedPage token /> }.into_any();
    }
    let auth = provide_auth();
    let signed_in = move || matches!(auth.state.get(), AuthState::SignedIn(_));
    let checking = move || auth.state.get() == AuthState::Checking;
    view! {
        <Show when=move || !checking() fallback=|| view! { <div class="checking"></div> }>
            <Show when=signed_in fallback=|| view! { <SignIn /> }>
                <Workspace />
            </Show>
        </Show>
    }
    .into_any()
}

/// The signed-in page: sidebar, header, the open session.
#[component]
fn Workspace() -> impl IntoView {
    let sessions = provide_sessions();
    let session = provide_session();
    let layout = provide_layout();
    let route = use_route();
    // The socket follows the hash: opening another session closes the old socket, and
    // the drawer (on a phone) closes to show it.
    Effect::new(move |_| {
        session.open(route.get());
        layout.drawer_open.set(false);
    });
    // The open session's badge follows its own run state without waiting for the timer.
    Effect::new(move |previous: Option<_>| {
        let state = session.run().get();
        if previous.is_some_and(|previous| previous != state) {
            sessions.refresh();
        }
        state
    });
    let timer = set_interval_with_handle(move || sessions.refresh(), LIST_REFRESH).ok();
    on_cleanup(move || {
        if let Some(timer) = timer {
            timer.clear();
        }
    });
    view! {
        <div class="app" class:drawer-open=move || layout.drawer_open.get()>
            <Sidebar />
            <div class="drawer-backdrop" on:click=move |_| layout.drawer_open.set(false)></div>
            <main class="main">
                <Header />
                <SessionPage />
            </main>
            <Shortcuts />
            <NeedsYou />
            <UndoDelete />
        </div>
    }
}
