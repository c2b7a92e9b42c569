//! "The agent needs you", told outside the page: the tab title counts the sessions waiting
//! for an answer, and when one starts waiting while the tab is hidden, a browser
//! notification says so (once the person has allowed them; clicking it opens the session).
//! The sidebar's button asks for that permission, from a click as browsers require.

use leptos::prelude::*;
use shared::api::SessionStatus;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Notification, NotificationOptions, NotificationPermission};

use crate::state::route::navigate;
use crate::state::waiting::{tab_title, Waiting, WaitingWatch};
use crate::state::{use_session, use_sessions};

/// Keeps the tab title and notifications in step with the sessions that wait.
#[component]
pub fn NeedsYou() -> impl IntoView {
    let session = use_session();
    let sessions = use_sessions();
    let waiting = Memo::new(move |_| {
        sessions.sessions.with(|list| {
            list.iter()
                .filter(|s| session.status_of(&s.id, s.status) == SessionStatus::AwaitingInput)
                .map(|s| (s.id.clone(), s.title.clone()))
                .collect::<Vec<Waiting>>()
        })
    });
    let watch = StoredValue::new(WaitingWatch::default());
    Effect::new(move |_| {
        let now = waiting.get();
        document().set_title(&tab_title(now.len()));
        let fresh = watch
            .try_update_value(|watch| watch.look(&now))
            .unwrap_or_default();
        if document().hidden() && permission() == Some(NotificationPermission::Granted) {
            fresh.iter().for_each(notify);
        }
    });
    on_cleanup(|| document().set_title(&tab_title(0)));
}

/// The "Turn on notifications" button, shown while the browser has not been asked yet.
#[component]
pub fn NotificationToggle() -> impl IntoView {
    let asked = RwSignal::new(permission());
    let ask = move |_| {
        let Ok(promise) = Notification::request_permission() else {
            return;
        };
        leptos::task::spawn_local(async move {
            let _ = JsFuture::from(promise).await;
            asked.set(permission());
        });
    };
    view! {
        <Show when=move || asked.get() == Some(NotificationPermission::Default)>
            <button class="btn btn-quiet notify-toggle" data-testid="enable-notifications" on:click=ask>
                "🔔 Notify me when the agent needs me"
            </button>
        </Show>
    }
}

/// The notification permission, or `None` where the browser has no notifications.
fn permission() -> Option<NotificationPermission> {
    let supported =
        js_sys::Reflect::has(&window(), &JsValue::from_str("Notification")).unwrap_or(false);
    supported.then(Notification::permission)
}

/// Shows one "needs you" notification; clicking it opens that session in this tab.
fn notify((id, title): &Waiting) {
    let options = NotificationOptions::new();
    let name = if title.is_empty() { "A session" } else { title };
    options.set_body(&format!("{name} is waiting for your answer."));
    // One notification per session: a second one for the same session replaces it.
    options.set_tag(&format!("tandem-{id}"));
    let Ok(notification) = Notification::new_with_options("The agent needs you — Tandem", &options)
    else {
        return;
    };
    let id = id.clone();
    let shown = notification.clone();
    let on_click = Closure::once_into_js(move || {
        let _ = window().focus();
        navigate(Some(&id));
        shown.close();
    });
    notification.set_onclick(Some(on_click.unchecked_ref()));
}
