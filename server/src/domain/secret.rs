//! A secret setting (an API key, a database password): it never shows in `Debug`
//! output, so a logged config or error cannot leak it.

use std::fmt;
use std::str::FromStr;

/// An API key or another secret setting. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The key itself, for the one header that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl From<&str> for Secret {
    fn from(text: &str) -> Self {
        Self(text.trim().to_string())
    }
}

impl FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Self(text.trim().to_string()))
    }
}
