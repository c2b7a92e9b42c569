//! Identifiers: [`SessionId`] (a UUID, parsed and validated) and prefixed random ids
//! for runs, messages, tool calls and interrupts.

use std::fmt;

use uuid::Uuid;

use super::UserId;

/// Why a string is not a valid identifier.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{0}` is not a valid session id (expected a UUID)")]
pub struct IdError(String);

/// A session (AG-UI thread) id: a UUID, time-ordered when Tandem makes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(Uuid);

impl SessionId {
    /// A new, time-ordered id.
    pub fn generate() -> Self {
        Self(Uuid::now_v7())
    }

    /// Parses the hyphenated UUID form.
    pub fn parse(text: &str) -> Result<Self, IdError> {
        if text.len() != 36 {
            return Err(IdError(truncate(text)));
        }
        Uuid::parse_str(text)
            .map(Self)
            .map_err(|_| IdError(truncate(text)))
    }

    /// The session of `owner`'s AG-UI thread `thread` (a UUID the client chose): a UUIDv5
    /// in the thread's namespace named by the owner's id, so two users' threads of one
    /// id are two sessions, and no one's id tells anything about another's.
    pub fn of_thread(thread: SessionId, owner: UserId) -> Self {
        Self(Uuid::new_v5(&thread.0, owner.as_bytes()))
    }

    /// The session a schedule's fire for one scheduled time starts: a UUIDv5 of the
    /// schedule and the time, so an instance that fires it again after a crash (or two
    /// instances racing) name the same session.
    pub fn of_fire(schedule: &str, scheduled_for_ms: i64) -> Self {
        let name = format!("tandem-schedule:{schedule}@{scheduled_for_ms}");
        Self(Uuid::new_v5(&Uuid::NAMESPACE_URL, name.as_bytes()))
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// A random id with a readable prefix, e.g. `run_5f0c…`.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", Uuid::new_v4().simple())
}

fn truncate(text: &str) -> String {
    text.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_round_trip() {
        let id = SessionId::generate();
        assert_eq!(SessionId::parse(&id.to_string()), Ok(id));
    }

    #[test]
    fn bad_session_ids_are_refused() {
        assert!(SessionId::parse("nope").is_err());
        assert!(SessionId::parse(&"x".repeat(36)).is_err());
        assert!(SessionId::parse(&"a".repeat(10_000)).is_err());
    }

    #[test]
    fn a_threads_session_is_the_owners_own_and_stable() {
        let thread = SessionId::generate();
        let (alice, bob) = (UserId::generate(), UserId::generate());
        let of_alice = SessionId::of_thread(thread, alice);
        assert_eq!(of_alice, SessionId::of_thread(thread, alice));
        assert_ne!(of_alice, SessionId::of_thread(thread, bob));
        assert_ne!(of_alice.to_string(), thread.to_string());
    }

    #[test]
    fn prefixed_ids_are_unique() {
        assert_ne!(new_id("run"), new_id("run"));
        assert!(new_id("call").starts_with("call_"));
    }
}
