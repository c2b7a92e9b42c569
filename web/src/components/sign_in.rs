//! The sign-in screen of `--auth token`: paste an API token, get the sign-in cookie.

use leptos::prelude::*;

use crate::state::{use_auth, AuthState};

/// The sign-in form.
#[component]
pub fn SignIn() -> impl IntoView {
    let auth = use_auth();
    // Nothing of a session shows to someone signed out, not even its first paint.
    crate::first_paint::take_over();
    let token = RwSignal::new(String::new());
    let error = move || match auth.state.get() {
        AuthState::SignedOut { error } => error,
        _ => None,
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let value = token.get_untracked();
        if !value.trim().is_empty() {
            auth.sign_in(value);
        }
    };
    view! {
        <main class="sign-in">
            <form class="sign-in-card" data-testid="sign-in-form" on:submit=submit>
                <h1>"Sign in to Tandem"</h1>
                <p class="sign-in-help">
                    "Paste your API token. An administrator creates one with "
                    <code>"tandem users add NAME"</code>"."
                </p>
                <label for="sign-in-token">"API token"</label>
                <input
                    id="sign-in-token"
                    data-testid="sign-in-token"
                    type="password"
                    autocomplete="current-password"
                    placeholder="tdm_…"
                    bind:value=token
                />
                <Show when=move || error().is_some()>
                    <p class="sign-in-error" role="alert" data-testid="sign-in-error">
                        {error}
                    </p>
                </Show>
                <button
                    class="btn btn-primary"
                    type="submit"
                    data-testid="sign-in-submit"
                    disabled=move || auth.busy.get() || token.with(|t| t.trim().is_empty())
                >
                    "Sign in"
                </button>
            </form>
        </main>
    }
}
