//! The root component: asks who the page acts for and shows the sign-in screen or the
//! workspace. The workspace provides the session list and the open session to everything
//! below (the list follows the server live) and keeps the open session in step with the
//! URL hash; it is built afresh on every sign-in and torn down (sockets and the list's
//! stream closed) on sign-out.

use leptos::prelude::*;

use super::session::SessionPage;
use super::shared::SharedPage;
use crate::components::{Header, NeedsYou, Shortcuts, Sidebar, SignIn, StatePanel, UndoDelete};
use crate::state::route::shared_link;
use crate::state::route::use_route;
use crate::state::{
    provide_auth, provide_layout, provide_models, provide_session, provide_sessions, AuthState,
};

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
    provide_sessions();
    provide_models();
    let session = provide_session();
    let layout = provide_layout();
    let route = use_route();
    // The socket follows the hash: opening another session closes the old socket, and
    // the drawer (on a phone) closes to show it.
    Effect::new(move |_| {
        session.open(route.get());
        layout.drawer_open.set(false);
    });
    view! {
        <div class="app" class:drawer-open=move || layout.drawer_open.get()>
            <Sidebar />
            <div class="drawer-backdrop" on:click=move |_| layout.drawer_open.set(false)></div>
            <main class="main">
                <Header />
                <SessionPage />
            </main>
            <StatePanel />
            <Shortcuts />
            <NeedsYou />
            <UndoDelete />
        </div>
    }
}
