//! The main area: the open session's transcript, notice and composer, or a welcome screen
//! when no session is open.

use leptos::prelude::*;

use crate::api::ConnState;
use crate::components::{Composer, Notice, Transcript};
use crate::state::{use_session, use_sessions};

/// The open session, or a prompt to pick or start one.
#[component]
pub fn SessionPage() -> impl IntoView {
    let session = use_session();
    let sessions = use_sessions();
    view! {
        <Show
            when=move || session.id.with(Option::is_some)
            fallback=move || view! {
                <div class="welcome">
                    <h2>"Work with an agent, in tandem."</h2>
                    <p>"Start a session and send a message. When the agent needs you, it asks — right here."</p>
                    <button class="btn btn-primary" on:click=move |_| sessions.create()>
                        "Start a new session"
                    </button>
                </div>
            }
        >
            <Transcript />
            <Show when=move || session.connection.get() == ConnState::Reconnecting>
                <div class="reconnecting" data-testid="reconnecting" role="status">
                    "Connection lost — reconnecting. Nothing is lost: what you miss replays when it is back."
                </div>
            </Show>
            <div class="dock">
                <Notice />
                <Composer />
            </div>
        </Show>
    }
}
