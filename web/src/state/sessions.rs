//! The session list in the sidebar, refreshed from `GET /api/sessions`, and the search
//! over it (`GET /api/sessions?q=`).
//!
//! [`SessionList`] is provided once by the app and reached with [`use_sessions`]. It owns the
//! list and its refresh, the search and its results, creating, renaming and deleting
//! sessions; a refresh that answers after a newer one is dropped so the list never goes
//! back in time. It must not render anything.

use leptos::prelude::*;
use leptos::task::spawn_local;
use shared::api::SessionSummary;

use crate::api::{rest, ApiError};

use super::route::navigate;

/// The sessions the server knows, newest first.
#[derive(Clone, Copy)]
pub struct SessionList {
    /// The last list the server returned.
    pub sessions: RwSignal<Vec<SessionSummary>>,
    /// The last failure, shown in the sidebar until a refresh succeeds.
    pub error: RwSignal<Option<ApiError>>,
    /// What the person searches for (titles and message text); empty when not searching.
    pub search: RwSignal<String>,
    /// The sessions the search found, once it answered (`None` when not searching).
    pub results: RwSignal<Option<Vec<SessionSummary>>>,
    generation: StoredValue<u64>,
    search_generation: StoredValue<u64>,
}

/// The session list from context. Panics outside [`provide_sessions`]'s subtree.
pub fn use_sessions() -> SessionList {
    expect_context::<SessionList>()
}

/// Creates the session list, provides it to the subtree and loads it once.
pub fn provide_sessions() -> SessionList {
    let list = SessionList {
        sessions: RwSignal::new(Vec::new()),
        error: RwSignal::new(None),
        search: RwSignal::new(String::new()),
        results: RwSignal::new(None),
        generation: StoredValue::new(0),
        search_generation: StoredValue::new(0),
    };
    provide_context(list);
    list.refresh();
    list
}

impl SessionList {
    /// Reloads the list in the background.
    pub fn refresh(self) {
        let generation = self.generation.get_value() + 1;
        self.generation.set_value(generation);
        spawn_local(async move {
            let result = rest::list_sessions(None).await;
            if self.generation.try_get_value() != Some(generation) {
                return;
            }
            match result {
                Ok(sessions) => {
                    self.sessions.set(sessions);
                    self.error.set(None);
                }
                Err(error) => self.error.set(Some(error)),
            }
        });
    }

    /// Searches titles and message text; an empty text ends the search. An answer that
    /// comes after a newer search's is dropped.
    pub fn find(self, text: String) {
        self.search.set(text.clone());
        let generation = self.search_generation.get_value() + 1;
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
                Ok(renamed) => {
                    self.sessions.update(|list| {
                        if let Some(row) = list.iter_mut().find(|row| row.id == renamed.id) {
                            *row = renamed;
                        }
                    });
                    self.refresh();
                }
                Err(error) => self.error.set(Some(error)),
            }
        });
    }

    /// Creates a session and opens it.
    pub fn create(self) {
        spawn_local(async move {
            match rest::create_session().await {
                Ok(summary) => {
                    navigate(Some(&summary.id));
                    self.refresh();
                }
                Err(error) => self.error.set(Some(error)),
            }
        });
    }

    /// Deletes a session; if it was open, nothing is open afterwards.
    pub fn delete(self, id: String, was_open: bool) {
        spawn_local(async move {
            match rest::delete_session(&id).await {
                Ok(()) => {
                    if was_open {
                        navigate(None);
                    }
                    self.refresh();
                }
                Err(error) => self.error.set(Some(error)),
            }
        });
    }
}
