//! Panels whose code the first load does not fetch.
//!
//! The dialogs and panels a session opens now and then (sharing, the server's details, the
//! keyboard shortcuts, the shared state) and the controls of a question waiting for the
//! person ([`super::interrupt`]) are split points (`#[wasm_split]`): the function
//! that builds each one, and all the code only it reaches, goes into a second WASM module
//! that `scripts/build.sh` splits off, fetched the first time the panel opens and kept for
//! the page's life. Off the wasm32 target (the host's unit tests) the functions are plain
//! calls.
//!
//! A button that opens one starts the fetch when the pointer comes over it or it gets
//! focus ([`warm`]), so the panel is usually there by the click. A module that cannot be
//! fetched (the server went away, or was updated and no longer has this page's modules)
//! leaves the panel closed and says so in the session's notice; the next try fetches again.

use std::future::Future;

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_split_helpers::SplitLoaderError;

use crate::api::ApiError;
use crate::state::use_session;

/// The view a split function builds, or why its module did not load.
pub type Loaded = Result<AnyView, SplitLoaderError>;

/// Shows the view `load` builds once its module is in; if it cannot be loaded, says so in
/// the notice and calls `close`, so the control that opened the panel can open it again.
pub fn on_first_use(
    load: impl Future<Output = Loaded> + Send + 'static,
    close: impl FnOnce() + Send + 'static,
) -> impl IntoView {
    let session = use_session();
    Suspend::new(async move {
        load.await.unwrap_or_else(|_| {
            session.report(ApiError::new(
                "page_module",
                "This part of the page could not be loaded: the server may be unreachable or \
                 updated since the page opened. Reload the page to use it.",
            ));
            close();
            ().into_any()
        })
    })
}

/// Starts fetching a split function's module (its `preload`) without waiting for it.
pub fn warm<F>(preload: fn() -> F)
where
    F: Future<Output = Result<(), SplitLoaderError>> + 'static,
{
    spawn_local(async move {
        // A failure shows when the panel is opened; the next try fetches again.
        let _ = preload().await;
    });
}
