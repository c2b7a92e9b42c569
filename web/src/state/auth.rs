//! Who the page acts for: checked once at start (`GET /api/auth/me`), set by signing in
//! with an API token, cleared by signing out or when the server refuses the cookie; and
//! what is left of their budget, read again on [`Auth::refresh_budget`].
//!
//! [`Auth`] is provided by the app root and reached with [`use_auth`]. Under `--auth none`
//! the server names the built-in `local` user and there is nothing to sign in to. It must
//! not render anything.

use leptos::prelude::*;
use leptos::task::spawn_local;
use shared::api::CurrentUser;
use shared::budget::BudgetLine;

use crate::api::{rest, ApiError};

/// Where the page stands.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthState {
    /// Asking the server.
    Checking,
    /// Needs a token; `error` says why the last attempt failed.
    SignedOut { error: Option<String> },
    /// Acting for this user.
    SignedIn(CurrentUser),
}

/// The sign-in state, shared through context. Cheap to copy.
#[derive(Clone, Copy)]
pub struct Auth {
    pub state: RwSignal<AuthState>,
    /// A sign-in or sign-out is under way.
    pub busy: RwSignal<bool>,
    /// The caps that apply to the user and what is left of each (empty: none).
    pub budget: RwSignal<Vec<BudgetLine>>,
}

/// The sign-in state from context. Panics outside [`provide_auth`]'s subtree.
pub fn use_auth() -> Auth {
    expect_context::<Auth>()
}

/// Creates the sign-in state, provides it, and asks the server who the page is.
pub fn provide_auth() -> Auth {
    let auth = Auth {
        state: RwSignal::new(AuthState::Checking),
        busy: RwSignal::new(false),
        budget: RwSignal::new(Vec::new()),
    };
    provide_context(auth);
    rest::on_unauthorized(move || {
        if matches!(auth.state.get_untracked(), AuthState::SignedIn(_)) {
            auth.state.set(AuthState::SignedOut {
                error: Some("Your sign-in has ended. Sign in again to continue.".into()),
            });
        }
    });
    spawn_local(async move {
        let state = match rest::me().await {
            Ok(user) => auth.signed_in(user),
            Err(error) if error.code == "unauthorized" => AuthState::SignedOut { error: None },
            Err(error) => AuthState::SignedOut {
                error: Some(error.message),
            },
        };
        auth.state.set(state);
    });
    auth
}

impl Auth {
    /// Signs in with an API token.
    pub fn sign_in(self, token: String) {
        self.busy.set(true);
        spawn_local(async move {
            let state = match rest::sign_in(&token).await {
                Ok(user) => self.signed_in(user),
                Err(error) => AuthState::SignedOut {
                    error: Some(explain(&error)),
                },
            };
            self.state.set(state);
            self.busy.set(false);
        });
    }

    /// Signs out (the server forgets the sign-in) and shows the sign-in form.
    pub fn sign_out(self) {
        self.busy.set(true);
        spawn_local(async move {
            let error = rest::sign_out().await.err().map(|e| e.message);
            self.state.set(AuthState::SignedOut { error });
            self.busy.set(false);
        });
    }

    /// The state of acting for `user`, whose budget it keeps.
    fn signed_in(self, mut user: CurrentUser) -> AuthState {
        self.budget.set(std::mem::take(&mut user.budget));
        AuthState::SignedIn(user)
    }

    /// Reads what is left of the budget again (after a run spent some).
    pub fn refresh_budget(self) {
        spawn_local(async move {
            if let Ok(user) = rest::me().await {
                self.budget.set(user.budget);
            }
        });
    }

    /// Whether the page signs in at all (false under `--auth none`).
    pub fn can_sign_out(self) -> bool {
        matches!(self.state.get(), AuthState::SignedIn(user) if user.auth == "token")
    }
}

fn explain(error: &ApiError) -> String {
    match error.code.as_str() {
        "invalid_token" => "That token is not valid. Check it, or ask for a new one.".into(),
        _ => error.message.clone(),
    }
}
