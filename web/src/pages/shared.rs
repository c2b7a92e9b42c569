//! The view a share link opens, `#/shared/<token>`: the session's transcript, live and
//! read-only, for someone who need not sign in, and the instructions the model was given
//! when the link shows them. The server has already removed what the link hides; the page
//! only shows what arrives.

use leptos::prelude::*;
use leptos::task::spawn_local;
use shared::sharing::SharedSession;

use crate::api::rest;
use crate::components::header::Connection;
use crate::components::image_viewer::{provide_image_viewer, ImageViewerHost};
use crate::components::theme_picker::ThemePicker;
use crate::components::{StatePanel, Transcript};
use crate::state::provide_shared_session;
use crate::state::transcript::Instructions;

/// The instructions the model was given, when the link shows them and there are any.
fn told(given: Instructions) -> Option<impl IntoView> {
    let parts = [
        ("The owner's, for all their conversations: ", given.person),
        ("This conversation's: ", given.conversation),
    ];
    let parts: Vec<_> = parts
        .into_iter()
        .filter(|(_, text)| !text.is_empty())
        .collect();
    (!parts.is_empty()).then(|| {
        view! {
            <details class="shared-instructions" data-testid="shared-instructions">
                <summary>"Instructions the model was given"</summary>
                {parts
                    .into_iter()
                    .map(|(whose, text)| view! { <p><strong>{whose}</strong>{text}</p> })
                    .collect_view()}
            </details>
        }
    })
}

/// The shared session, or why the link opens nothing.
#[component]
pub fn SharedPage(token: String) -> impl IntoView {
    let session = provide_shared_session();
    let viewer = provide_image_viewer();
    let info = RwSignal::new(None::<Result<SharedSession, String>>);
    let lookup = token.clone();
    spawn_local(async move {
        let found = rest::shared_session(&lookup).await;
        info.set(Some(found.map_err(|error| error.message)));
    });
    session.open_shared(&token);
    let title = move || match info.get() {
        Some(Ok(shared)) => shared.title,
        Some(Err(_)) => "This link no longer works".into(),
        None => "Shared session".into(),
    };
    let hidden = move || {
        let Some(Ok(shared)) = info.get() else {
            return None;
        };
        let parts: Vec<&str> = [
            shared.hide_reasoning.then_some("reasoning"),
            shared.hide_tool_arguments.then_some("tool arguments"),
            (!shared.attachments).then_some("attachments"),
            (!shared.state).then_some("the shared state"),
        ]
        .into_iter()
        .flatten()
        .collect();
        let listed = match parts.as_slice() {
            [] => return None,
            [one] => one.to_string(),
            [first @ .., last] => format!("{} and {last}", first.join(", ")),
        };
        Some(format!("Hidden by the owner: {listed}"))
    };
    view! {
        <div class="app shared-view">
            <main class="main">
                <header class="header">
                    <div class="header-row">
                        <div class="header-title-group">
                            <h1 class="header-title" title=title>{title}</h1>
                        </div>
                        <span class="shared-badge" data-testid="shared-badge">"Read-only"</span>
                        <Connection />
                        <div class="header-more"><ThemePicker /></div>
                    </div>
                </header>
                {move || hidden().map(|hidden| view! {
                    <p class="shared-hidden" data-testid="shared-hidden">{hidden}</p>
                })}
                {move || matches!(info.get(), Some(Err(_))).then(|| view! {
                    <p class="welcome" data-testid="shared-gone">
                        "The owner deleted this link, or the session it showed. Ask them for a new one."
                    </p>
                })}
                {move || told(session.instructions().get())}
                <Show when=move || matches!(info.get(), Some(Ok(_)))>
                    <Transcript />
                </Show>
            </main>
            <StatePanel />
            <ImageViewerHost viewer />
        </div>
    }
}
