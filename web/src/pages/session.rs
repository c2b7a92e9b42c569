//! The main area: the open session's transcript, notice and composer; with no session
//! open, the same for a new conversation, which its first message creates.

use leptos::prelude::*;

use crate::api::ConnState;
use crate::components::{BranchSwitcher, Composer, Notice, Transcript};
use crate::state::use_session;

/// The open session, or a new conversation.
#[component]
pub fn SessionPage() -> impl IntoView {
    let session = use_session();
    let reconnecting = move || {
        session.id().with(Option::is_some) && session.connection().get() == ConnState::Reconnecting
    };
    // A line with others whose parting row is not shown (a branch made at its end, with
    // nothing of its own yet) has its switcher above the transcript.
    let switcher_above = move || session.part_key().is_none();
    view! {
        <Show when=switcher_above>
            <BranchSwitcher />
        </Show>
        <Transcript />
        <Show when=reconnecting>
            <div class="reconnecting" data-testid="reconnecting" role="status">
                "Connection lost — reconnecting. Nothing is lost: what you miss replays when it is back."
            </div>
        </Show>
        <div class="dock">
            <Notice />
            <Composer />
        </div>
    }
}
