//! The session list in the sidebar, followed live from `GET /api/sessions/stream`, and
//! the search over it (`GET /api/sessions?q=`).
//!
//! [`SessionList`] is provided once by the app and reached with [`use_sessions`]. It owns the
//! list and its stream (a snapshot, then each change as it commits anywhere: no polling,
//! so a session that starts waiting for its person shows at once, in a hidden tab too),
//! the search and its results, starting a new conversation (nothing is created on the
//! server until its first message), renaming and deleting sessions. A deletion leaves the
//! list at once but reaches the server only after [`UNDO_FOR`], so the person can take it
//! back; one still pending when the page goes away is sent then. It must not render
//! anything.

use std::collections::HashMap;
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use shared::api::{SessionListEvent, SessionSummary};

use crate::api::list_stream::{ListHandlers, ListStream};
use crate::api::{rest, ApiError};

use super::route::navigate;

/// How long a deletion can be undone before it reaches the server.
pub const UNDO_FOR: Duration = Duration::from_secs(6);

/// A deletion the person can still undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDelete {
    pub id: String,
    pub title: String,
    /// The session was open when it was deleted: undoing opens it again.
    pub was_open: bool,
}

/// The sessions the server knows, newest first.
#[derive(Clone, Copy)]
pub struct SessionList {
    /// The list as the server last told it, newest first.
    pub sessions: RwSignal<Vec<SessionSummary>>,
    /// The last failure, shown in the sidebar until the list is live again.
    pub error: RwSignal<Option<ApiError>>,
    /// What the person searches for (titles and message text); empty when not searching.
    pub search: RwSignal<String>,
    /// The sessions the search found, once it answered (`None` when not searching).
    pub results: RwSignal<Option<Vec<SessionSummary>>>,
    /// Deletions that can still be undone, oldest first; their sessions are not listed.
    pub deleting: RwSignal<Vec<PendingDelete>>,
    timers: StoredValue<HashMap<String, TimeoutHandle>>,
    search_generation: StoredValue<u64>,
    stream: StoredValue<Option<ListStream>, LocalStorage>,
}

/// The session list from context. Panics outside [`provide_sessions`]'s subtree.
pub fn use_sessions() -> SessionList {
    expect_context::<SessionList>()
}

/// Creates the session list, provides it to the subtree and follows it while the subtree
/// lives.
pub fn provide_sessions() -> SessionList {
    let list = SessionList {
        sessions: RwSignal::new(Vec::new()),
        error: RwSignal::new(None),
        search: RwSignal::new(String::new()),
        results: RwSignal::new(None),
        deleting: RwSignal::new(Vec::new()),
        timers: StoredValue::new(HashMap::new()),
        search_generation: StoredValue::new(0),
        stream: StoredValue::new_local(None),
    };
    provide_context(list);
    list.follow();
    on_cleanup(move || list.stream.set_value(None));
    let leaving = window_event_listener(leptos::ev::pagehide, move |_| list.delete_pending_now());
    on_cleanup(move || leaving.remove());
    list
}

impl SessionList {
    /// Opens the list's stream; what it tells keeps the list (and the search's results)
    /// current.
    fn follow(self) {
        let stream = ListStream::open(ListHandlers {
            on_event: Box::new(move |event| self.apply(event)),
            on_open: Box::new(move |open| {
                if !open {
                    self.error.set(Some(ApiError::new(
                        "list_offline",
                        "The session list is not live; trying again…",
                    )));
                }
            }),
        });
        self.stream.set_value(Some(stream));
    }

    /// Applies one message of the stream.
    fn apply(self, event: SessionListEvent) {
        match event {
            SessionListEvent::Snapshot { sessions } => {
                self.sessions.set(sessions);
                self.error.set(None);
            }
            SessionListEvent::Changed { session } => {
                self.sessions.update(|list| upsert(list, session.clone()));
                self.results.update(|found| {
                    if let Some(row) = found.iter_mut().flatten().find(|row| row.id == session.id) {
                        *row = session;
                    }
                });
            }
            SessionListEvent::Removed { id } => {
                self.sessions.update(|list| list.retain(|row| row.id != id));
                self.results.update(|found| {
                    if let Some(found) = found {
                        found.retain(|row| row.id != id);
                    }
                });
            }
        }
    }

    /// Searches titles and message text; an empty text ends the search. An answer that
    /// comes after a newer search's is dropped.
    pub fn find(self, text: String) {
        // It runs after a pause in typing: the list may be gone by then (signed out).
        let Some(generation) = self.search_generation.try_get_value().map(|last| last + 1) else {
            return;
        };
        self.search.set(text.clone());
        self.search_generation.set_value(generation);
        let text = text.trim().to_string();
        if text.is_empty() {
            self.results.set(None);
            return;
        }
        spawn_local(async move {
            let result = rest::list_sessions(Some(&text)).await;
            if self.search_generation.try_get_value() != Some(generation) {
                return;
            }
            match result {
                Ok(found) => self.results.set(Some(found)),
                Err(error) => self.error.set(Some(error)),
            }
        });
    }

    /// Renames a session; the list shows the new title at once.
    pub fn rename(self, id: String, title: String) {
        spawn_local(async move {
            match rest::rename_session(&id, &title).await {
                Ok(renamed) => self.sessions.update(|list| upsert(list, renamed)),
                Err(error) => self.error.set(Some(error)),
            }
        });
    }

    /// Opens a new conversation. Nothing is created on the server until its first
    /// message (`Session::start`), so empty sessions never pile up.
    pub fn start_new(self) {
        navigate(None);
    }

    /// The listed sessions, without those whose deletion is pending. Reactive.
    pub fn shown(self) -> Vec<SessionSummary> {
        let hidden = |s: &SessionSummary| self.deleting.with(|d| d.iter().any(|p| p.id == s.id));
        let listed = self.results.get().unwrap_or_else(|| self.sessions.get());
        listed.into_iter().filter(|s| !hidden(s)).collect()
    }

    /// Deletes a session, undoably: it leaves the list (and, if it was open, the page
    /// opens a new conversation) at once, and reaches the server after [`UNDO_FOR`].
    pub fn delete(self, id: String, title: String, was_open: bool) {
        if self
            .deleting
            .with_untracked(|d| d.iter().any(|p| p.id == id))
        {
            return;
        }
        if was_open {
            navigate(None);
        }
        let timer = {
            let id = id.clone();
            set_timeout_with_handle(move || self.delete_now(id), UNDO_FOR).ok()
        };
        if let Some(timer) = timer {
            self.timers.update_value(|timers| {
                timers.insert(id.clone(), timer);
            });
        }
        self.deleting.update(|d| {
            d.push(PendingDelete {
                id,
                title,
                was_open,
            })
        });
    }

    /// Takes a pending deletion back: the session is listed again (and opened, if it was
    /// open when deleted).
    pub fn undo_delete(self, id: &str) {
        if let Some(timer) = self.timers.try_update_value(|t| t.remove(id)).flatten() {
            timer.clear();
        }
        let mut undone = None;
        self.deleting.update(|d| {
            if let Some(at) = d.iter().position(|p| p.id == id) {
                undone = Some(d.remove(at));
            }
        });
        if let Some(PendingDelete {
            id, was_open: true, ..
        }) = undone
        {
            navigate(Some(&id));
        }
    }

    /// Sends a pending deletion to the server now.
    fn delete_now(self, id: String) {
        self.timers.update_value(|t| {
            t.remove(&id);
        });
        spawn_local(async move {
            let result = rest::delete_session(&id).await;
            if result.is_ok() {
                self.sessions.update(|list| list.retain(|row| row.id != id));
            }
            self.deleting.update(|d| d.retain(|p| p.id != id));
            if let Err(error) = result {
                self.error.set(Some(error));
            }
        });
    }

    /// Sends every pending deletion now, in a way that outlives the page (it is going).
    fn delete_pending_now(self) {
        let pending = self.deleting.try_get_untracked().unwrap_or_default();
        for deletion in pending {
            rest::delete_session_as_page_leaves(&deletion.id);
        }
    }
}

/// Puts `row` in the list in its place (most recently updated first, as the server
/// orders it), replacing the row it had. The list shows each conversation once, by its
/// most recently updated line: a line updated before the one shown leaves it be.
fn upsert(list: &mut Vec<SessionSummary>, row: SessionSummary) {
    let newer_shown = list.iter().any(|listed| {
        listed.conversation_id == row.conversation_id
            && listed.id != row.id
            && listed.updated_at > row.updated_at
    });
    if newer_shown {
        return;
    }
    list.retain(|listed| listed.id != row.id && listed.conversation_id != row.conversation_id);
    let at = list
        .iter()
        .position(|listed| (listed.updated_at, &listed.id) < (row.updated_at, &row.id))
        .unwrap_or(list.len());
    list.insert(at, row);
}
