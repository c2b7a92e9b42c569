//! Users: [`UserId`] (a UUID) and [`UserName`] (a short lowercase handle that also names
//! the user's workspace folder, so it is safe as one path component).

use std::fmt;

use uuid::Uuid;

/// Why a string is not a valid user identifier or name.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UserError {
    #[error("`{0}` is not a valid user id (expected a UUID)")]
    Id(String),
    #[error(
        "`{0}` is not a valid user name: use 1 to 32 lowercase letters, digits, `-` or `_`, \
         starting with a letter or digit"
    )]
    Name(String),
    #[error("`local` is reserved for the user of `--auth none`")]
    Reserved,
}

/// A user's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UserId(Uuid);

impl UserId {
    /// The one user of `--auth none`: every request on a loopback server without
    /// authentication acts for it.
    pub const LOCAL: UserId = UserId(Uuid::nil());

    /// A new, time-ordered id.
    pub fn generate() -> Self {
        Self(Uuid::now_v7())
    }

    /// Parses the hyphenated UUID form.
    pub fn parse(text: &str) -> Result<Self, UserError> {
        match (text.len(), Uuid::parse_str(text)) {
            (36, Ok(id)) => Ok(Self(id)),
            _ => Err(UserError::Id(text.chars().take(64).collect())),
        }
    }

    /// The id's 16 bytes.
    pub fn as_bytes(&self) -> &[u8; 16] {
        self.0.as_bytes()
    }
}

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

/// A user's name: `^[a-z0-9][a-z0-9_-]{0,31}$`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UserName(String);

impl UserName {
    /// The name of [`UserId::LOCAL`].
    pub const LOCAL: &'static str = "local";

    /// Parses a name a person chose; `local` is reserved.
    pub fn parse(text: &str) -> Result<Self, UserError> {
        let name = Self::parse_any(text)?;
        if name.0 == Self::LOCAL {
            return Err(UserError::Reserved);
        }
        Ok(name)
    }

    /// Parses a stored name (which may be `local`).
    pub fn parse_any(text: &str) -> Result<Self, UserError> {
        let mut chars = text.chars();
        let first_ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        let rest_ok =
            chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_".contains(c));
        if !first_ok || !rest_ok || text.len() > 32 {
            return Err(UserError::Name(text.chars().take(64).collect()));
        }
        Ok(Self(text.to_string()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for UserName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_short_lowercase_handles() {
        assert_eq!(UserName::parse("alice").unwrap().as_str(), "alice");
        assert!(UserName::parse("bob_2-x").is_ok());
        for bad in [
            "",
            "Alice",
            "-a",
            ".a",
            "a/b",
            "a b",
            "ä",
            &"a".repeat(33),
            "..",
        ] {
            assert!(UserName::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(UserName::parse("local"), Err(UserError::Reserved));
        assert!(UserName::parse_any("local").is_ok());
    }

    #[test]
    fn ids_round_trip_and_local_is_nil() {
        let id = UserId::generate();
        assert_eq!(UserId::parse(&id.to_string()), Ok(id));
        assert_eq!(
            UserId::LOCAL.to_string(),
            "00000000-0000-0000-0000-000000000000"
        );
        assert!(UserId::parse("x").is_err());
    }
}
