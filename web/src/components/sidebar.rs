//! The sidebar: the "New session" button and the session list with status badges. A session
//! waiting for the person stands out with an amber "needs you" badge. A session's × deletes
//! it undoably (see [`crate::components::undo::UndoDelete`]).

use leptos::prelude::*;
use shared::api::{SessionStatus, SessionSummary};

use super::NotificationToggle;
use crate::state::route::hash_for;
use crate::state::{use_layout, use_session, use_sessions};

/// The session list and its controls.
#[component]
pub fn Sidebar() -> impl IntoView {
    let sessions = use_sessions();
    view! {
        <aside class="sidebar">
            <div class="brand">
                <span class="brand-mark">"◆"</span>
                <span class="brand-name">"Tandem"</span>
            </div>
            <button class="btn btn-primary btn-wide" data-testid="new-session"
                on:click=move |_| {
                    sessions.start_new();
                    request_animation_frame(super::composer::focus_composer);
                }>
                "+ New session"
            </button>
            {move || sessions.error.get().map(|error| view! {
                <p class="sidebar-error">{error.message}</p>
            })}
            <SearchBox />
            <ul class="session-list" data-testid="session-list">
                <For
                    each=move || sessions.shown()
                    key=|s: &SessionSummary| (s.id.clone(), s.title.clone(), s.snippet.clone())
                    children=move |summary: SessionSummary| view! { <SessionItem summary /> }
                />
            </ul>
            {move || sessions.results.with(|r| r.as_ref().is_some_and(Vec::is_empty)).then(|| view! {
                <p class="search-empty" data-testid="search-empty">"No session matches."</p>
            })}
            <div class="sidebar-foot">
                <NotificationToggle />
            </div>
        </aside>
    }
}

/// How long typing pauses before the search runs.
const SEARCH_PAUSE: std::time::Duration = std::time::Duration::from_millis(200);

/// Searches titles and message text as the person types (after a short pause).
#[component]
fn SearchBox() -> impl IntoView {
    let sessions = use_sessions();
    let timer = StoredValue::new(None::<TimeoutHandle>);
    let on_input = move |ev| {
        let text = event_target_value(&ev);
        if let Some(pending) = timer.get_value() {
            pending.clear();
        }
        let handle = set_timeout_with_handle(move || sessions.find(text), SEARCH_PAUSE).ok();
        timer.set_value(handle);
    };
    view! {
        <div class="search" role="search">
            <input
                class="input search-input"
                type="search"
                data-testid="search"
                placeholder="Search sessions"
                aria-label="Search sessions by title or content"
                on:input=on_input
            />
        </div>
    }
}

/// One session: title and status badge; click opens it, the × deletes it.
#[component]
fn SessionItem(summary: SessionSummary) -> impl IntoView {
    let session = use_session();
    let sessions = use_sessions();
    let layout = use_layout();
    let id = StoredValue::new(summary.id.clone());
    let conversation = StoredValue::new(summary.conversation_id.clone());
    // Open when this line is, or another line of its conversation.
    let is_open = move || {
        session
            .id()
            .with(|open| open.as_deref() == Some(id.get_value().as_str()))
            || session.conversation() == Some(conversation.get_value())
    };
    // The open session's own socket knows its status sooner than the list's stream tells.
    let status = move || {
        let listed = sessions.sessions.with(|list| {
            list.iter()
                .find(|s| s.id == id.get_value())
                .map_or(SessionStatus::Idle, |s| s.status)
        });
        session.status_of(&id.get_value(), listed)
    };
    let title = if summary.title.is_empty() {
        "New session".to_string()
    } else {
        summary.title
    };
    let tooltip = title.clone();
    let deleted_title = title.clone();
    // The list is in order of each conversation's last activity, and says when that was.
    let listed_at = summary.updated_at;
    let updated = move || {
        sessions.sessions.with(|list| {
            list.iter()
                .find(|s| s.id == id.get_value())
                .map_or(listed_at, |s| s.updated_at)
        })
    };
    let snippet = summary.snippet.map(|snippet| {
        let query = sessions.search.get_untracked();
        view! { <span class="session-snippet" data-testid="search-snippet">{marked(&snippet, query.trim())}</span> }
    });
    view! {
        <li
            class="session-item"
            class:active=is_open
            data-testid="session-item"
            data-session-id=summary.id.clone()
            data-status=move || status().as_str()
        >
            <a
                class="session-link"
                href=hash_for(&summary.id)
                title=tooltip
                on:click=move |_| layout.drawer_open.set(false)
            >
                <span class="session-text">
                    <span class="session-title">{title}</span>
                    {snippet}
                    <span class="session-time" title="Last activity">{move || when(updated())}</span>
                </span>
                {move || badge(status())}
            </a>
            <button
                class="session-delete"
                data-testid="delete-session"
                title="Delete session"
                aria-label=format!("Delete session {deleted_title}")
                on:click={
                    let title = deleted_title.clone();
                    move |ev: leptos::ev::MouseEvent| {
                        ev.prevent_default();
                        ev.stop_propagation();
                        sessions.delete(id.get_value(), title.clone(), is_open());
                    }
                }
            >
                "×"
            </button>
        </li>
    }
}

fn badge(status: SessionStatus) -> Option<impl IntoView> {
    let (class, text) = match status {
        SessionStatus::Idle => return None,
        SessionStatus::Running => ("badge badge-running", "running"),
        SessionStatus::AwaitingInput => ("badge badge-needs-you", "needs you"),
    };
    Some(view! { <span class=class>{text}</span> })
}

/// A search result's snippet with what matched in `<mark>`.
fn marked(snippet: &str, query: &str) -> impl IntoView {
    match shared::search::find(snippet, query) {
        Some((start, end)) => view! {
            {snippet[..start].to_string()}
            <mark>{snippet[start..end].to_string()}</mark>
            {snippet[end..].to_string()}
        }
        .into_any(),
        None => snippet.to_string().into_any(),
    }
}

/// When a session last moved, short: the time today, else the day and month.
fn when(at_ms: i64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let date = js_sys::Date::new(&(at_ms as f64).into());
    let today = js_sys::Date::new_0();
    if date.to_date_string() == today.to_date_string() {
        format!("{:02}:{:02}", date.get_hours(), date.get_minutes())
    } else {
        let month = MONTHS.get(date.get_month() as usize).copied().unwrap_or("");
        format!("{} {month}", date.get_date())
    }
}
