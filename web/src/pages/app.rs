//! The root component: provides the session list and the open session to everything below,
//! keeps the open session in step with the URL hash, and keeps the list fresh.

use std::time::Duration;

use leptos::prelude::*;

use super::session::SessionPage;
use crate::components::{Header, Sidebar};
use crate::state::route::use_route;
use crate::state::{provide_session, provide_sessions};

/// How often the session list is reloaded so badges of other sessions stay right.
const LIST_REFRESH: Duration = Duration::from_secs(3);

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let sessions = provide_sessions();
    let session = provide_session();
    let route = use_route();
    // The socket follows the hash: opening another session closes the old socket.
    Effect::new(move |_| session.open(route.get()));
    // The open session's badge follows its own run state without waiting for the timer.
    Effect::new(move |previous: Option<_>| {
        let state = session.run.get();
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
        <div class="app">
            <Sidebar />
            <main class="main">
                <Header />
                <SessionPage />
            </main>
        </div>
    }
}
