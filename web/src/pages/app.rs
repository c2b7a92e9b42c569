//! The root component: follows the URL hash ([`crate::state::route`]) between a share
//! link's read-only view and the signed-in workspace, asking who the page acts for before
//! the workspace. The workspace provides the session list and the open session to
//! everything below (the list follows the server live) and keeps the open session in step
//! with the route; it is built afresh on every sign-in and torn down (sockets and the
//! list's stream closed) on sign-out. Another share link, or Back to the workspace,
//! builds its view afresh in the same tab.

use leptos::prelude::*;

use super::session::SessionPage;
use super::shared::SharedPage;
use crate::components::image_viewer::{provide_image_viewer, ImageViewerHost};
use crate::components::{Header, NeedsYou, Shortcuts, Sidebar, SignIn, StatePanel, UndoDelete};
use crate::state::route::provide_route;
use crate::state::{
    provide_auth, provide_layout, provide_models, provide_session, provide_sessions, AuthState,
};

/// The whole page: a share link's read-only view, or the signed-in workspace.
#[component]
pub fn App() -> impl IntoView {
    let route = provide_route();
    // Only a change between views (or of share link) builds the page again; opening
    // another session is the workspace's own.
    let shared = Memo::new(move |_| route.with(|route| route.shared().map(str::to_string)));
    move || match shared.get() {
        Some(token) => view! { <SharedPage token /> }.into_any(),
        None => view! { <SignedIn /> }.into_any(),
    }
}

/// Who the page acts for: the sign-in screen, or the workspace.
#[component]
fn SignedIn() -> impl IntoView {
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
}

/// The signed-in page: sidebar, header, the open session.
#[component]
fn Workspace() -> impl IntoView {
    provide_sessions();
    provide_models();
    let session = provide_session();
    let layout = provide_layout();
    let viewer = provide_image_viewer();
    let route = crate::state::route::use_route();
    let open = Memo::new(move |_| route.with(|route| route.session().map(str::to_string)));
    // The socket follows the hash: opening another session closes the old socket, and
    // the drawer (on a phone) closes to show it.
    Effect::new(move |_| {
        session.open(open.get());
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
            <ImageViewerHost viewer />
        </div>
    }
}
