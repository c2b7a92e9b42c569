//! The page's place lives in the URL hash: `#/sessions/<id>` opens a session (so a reload
//! or a second tab opens the same one), `#/shared/<token>` a share link's view, anything
//! else a new conversation.
//!
//! It owns reading and writing that hash and nothing else. [`provide_route`] turns it into
//! a signal that follows `hashchange`, which the browser fires for every change of the
//! hash: a link followed, a hash pasted into the same tab, Back and Forward.

use leptos::prelude::*;

const PREFIX: &str = "#/sessions/";

const SHARED_PREFIX: &str = "#/shared/";

/// Where the page is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// A new conversation (no session open).
    New,
    /// A session of the signed-in person, by id.
    Session(String),
    /// A share link's read-only view, by the link's secret.
    Shared(String),
}

impl Route {
    /// The route a hash names; junk is a new conversation.
    pub fn from_hash(hash: &str) -> Self {
        if let Some(token) = shared_from_hash(hash) {
            return Self::Shared(token);
        }
        session_from_hash(hash).map_or(Self::New, Self::Session)
    }

    /// The route of the page's hash now.
    pub fn current() -> Self {
        Self::from_hash(&window().location().hash().unwrap_or_default())
    }

    /// The open session's id, if a session is open.
    pub fn session(&self) -> Option<&str> {
        match self {
            Self::Session(id) => Some(id),
            _ => None,
        }
    }

    /// The share link's secret, on a share link's view.
    pub fn shared(&self) -> Option<&str> {
        match self {
            Self::Shared(token) => Some(token),
            _ => None,
        }
    }
}

/// The session id in a hash like `#/sessions/<id>`, if there is one.
pub fn session_from_hash(hash: &str) -> Option<String> {
    let id = hash.strip_prefix(PREFIX)?.trim_end_matches('/');
    (!id.is_empty() && !id.contains('/')).then(|| id.to_string())
}

/// The share link's secret in a hash like `#/shared/<token>`, if there is one.
pub fn shared_from_hash(hash: &str) -> Option<String> {
    let token = hash.strip_prefix(SHARED_PREFIX)?.trim_end_matches('/');
    let valid = token.starts_with("tds_")
        && token.len() <= 64
        && token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    valid.then(|| token.to_string())
}

/// The hash that opens a session.
pub fn hash_for(id: &str) -> String {
    format!("{PREFIX}{id}")
}

/// Opens a session (or none) by setting the hash; the route signal follows.
pub fn navigate(id: Option<&str>) {
    let hash = id.map(hash_for).unwrap_or_default();
    let _ = window().location().set_hash(&hash);
}

/// Puts the route, following the URL hash, in context and returns it.
pub fn provide_route() -> ReadSignal<Route> {
    let (route, set_route) = signal(Route::current());
    let listener = window_event_listener(leptos::ev::hashchange, move |_| {
        let next = Route::current();
        if route.with_untracked(|now| *now != next) {
            set_route.set(next);
        }
    });
    on_cleanup(move || listener.remove());
    provide_context(route);
    route
}

/// The route from context. Panics outside [`provide_route`]'s subtree.
pub fn use_route() -> ReadSignal<Route> {
    expect_context::<ReadSignal<Route>>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_round_trip_and_junk_is_no_session() {
        assert_eq!(session_from_hash(&hash_for("abc")), Some("abc".into()));
        assert_eq!(session_from_hash("#/sessions/abc/"), Some("abc".into()));
        assert_eq!(session_from_hash("#/sessions/"), None);
        assert_eq!(session_from_hash(""), None);
        assert_eq!(session_from_hash("#/other/abc"), None);
        assert_eq!(
            shared_from_hash("#/shared/tds_Ab-9_x"),
            Some("tds_Ab-9_x".into())
        );
        assert_eq!(shared_from_hash("#/shared/tdm_Ab"), None);
        assert_eq!(shared_from_hash("#/shared/tds_a/../x"), None);
        assert_eq!(session_from_hash("#/shared/tds_a"), None);
    }

    #[test]
    fn every_hash_is_one_route() {
        assert_eq!(Route::from_hash(""), Route::New);
        assert_eq!(Route::from_hash("#/elsewhere"), Route::New);
        assert_eq!(
            Route::from_hash("#/sessions/abc"),
            Route::Session("abc".into())
        );
        assert_eq!(
            Route::from_hash("#/shared/tds_x1"),
            Route::Shared("tds_x1".into())
        );
        assert_eq!(Route::from_hash("#/shared/nope"), Route::New);
        assert_eq!(Route::Session("a".into()).session(), Some("a"));
        assert_eq!(Route::Shared("tds_a".into()).session(), None);
        assert_eq!(Route::Shared("tds_a".into()).shared(), Some("tds_a"));
    }
}
