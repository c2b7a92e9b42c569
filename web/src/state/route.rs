//! The open session lives in the URL hash, `#/sessions/<id>`, so a reload or a second tab
//! opens the same session; a share link's view is `#/shared/<token>`.
//!
//! It owns reading and writing that hash and nothing else; [`use_route`] turns it into a
//! signal that follows `hashchange`.

use leptos::prelude::*;

const PREFIX: &str = "#/sessions/";

/// The session id in a hash like `#/sessions/<id>`, if there is one.
pub fn session_from_hash(hash: &str) -> Option<String> {
    let id = hash.strip_prefix(PREFIX)?.trim_end_matches('/');
    (!id.is_empty() && !id.contains('/')).then(|| id.to_string())
}

const SHARED_PREFIX: &str = "#/shared/";

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

/// The share link this page was opened with, if any.
pub fn shared_link() -> Option<String> {
    shared_from_hash(&window().location().hash().unwrap_or_default())
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

/// The open session's id, following the URL hash.
pub fn use_route() -> ReadSignal<Option<String>> {
    let current = || session_from_hash(&window().location().hash().unwrap_or_default());
    let (route, set_route) = signal(current());
    let listener = window_event_listener(leptos::ev::hashchange, move |_| {
        let next = current();
        if route.get_untracked() != next {
            set_route.set(next);
        }
    });
    on_cleanup(move || listener.remove());
    route
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
}
