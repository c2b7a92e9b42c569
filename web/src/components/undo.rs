//! The toast that offers to undo a deletion while it has not reached the server yet
//! ([`crate::state::sessions::UNDO_FOR`]): one line per pending deletion, newest last.

use leptos::prelude::*;

use crate::state::use_sessions;

/// "Deleted “title”. Undo", for each deletion that can still be taken back.
#[component]
pub fn UndoDelete() -> impl IntoView {
    let sessions = use_sessions();
    view! {
        <div class="toasts" role="status" aria-live="polite">
            <For
                each=move || sessions.deleting.get()
                key=|pending| pending.id.clone()
                children=move |pending| {
                    let id = pending.id.clone();
                    view! {
                        <div class="toast" data-testid="undo-toast">
                            <span class="toast-text">{format!("Deleted “{}”.", pending.title)}</span>
                            <button
                                class="btn btn-small"
                                data-testid="undo-delete"
                                on:click=move |_| sessions.undo_delete(&id)
                            >
                                "Undo"
                            </button>
                        </div>
                    }
                }
            />
        </div>
    }
}
