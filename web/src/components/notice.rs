//! The dismissable notice that shows the latest error (an error frame or a failed send).

use leptos::prelude::*;

use crate::state::use_session;

/// The open session's error notice, if there is one.
#[component]
pub fn Notice() -> impl IntoView {
    let session = use_session();
    move || {
        session.notice().get().map(|error| {
            view! {
                <div class="notice" data-testid="notice" role="alert">
                    <span class="notice-text">{error.message}</span>
                    <code class="error-code">{error.code}</code>
                    <button
                        class="notice-close"
                        title="Dismiss"
                        aria-label="Dismiss"
                        on:click=move |_| session.dismiss_notice()
                    >
                        "×"
                    </button>
                </div>
            }
        })
    }
}
