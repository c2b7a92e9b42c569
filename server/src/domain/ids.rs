//! Identifiers: [`SessionId`] (a UUID, parsed and validated) and prefixed random ids
//! for runs, messages, tool calls and interrupts.

use std::fmt;

use uuid::Uuid;

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
    fn prefixed_ids_are_unique() {
        assert_ne!(new_id("run"), new_id("run"));
        assert!(new_id("call").starts_with("call_"));
    }
}
