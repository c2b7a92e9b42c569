//! Bearer secrets: 256 random bits from the OS, base64url; `Debug` never shows them.

use base64::Engine as _;

use crate::domain::TokenHash;

/// The prefix of API tokens (so a leaked one is recognisable, e.g. by secret scanners).
pub const TOKEN_PREFIX: &str = "tdm_";

/// The prefix of share-link secrets.
pub const SHARE_PREFIX: &str = "tds_";

/// An API token, a sign-in cookie value or a share link's secret.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretToken(String);

impl SecretToken {
    /// A new API token: `tdm_` and 43 base64url characters.
    pub fn api_token() -> Self {
        Self(format!("{TOKEN_PREFIX}{}", random_text()))
    }

    /// A new sign-in cookie value.
    pub fn cookie() -> Self {
        Self(random_text())
    }

    /// A new share link's secret: `tds_` and 43 base64url characters.
    pub fn share_link() -> Self {
        Self(format!("{SHARE_PREFIX}{}", random_text()))
    }

    /// The secret, for the one place that hands it out.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What is stored of it.
    pub fn hash(&self) -> TokenHash {
        TokenHash::of(&self.0)
    }
}

impl std::fmt::Debug for SecretToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretToken(***)")
    }
}

fn random_text() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_hidden_in_debug() {
        let (a, b) = (SecretToken::api_token(), SecretToken::api_token());
        assert_ne!(a, b);
        assert!(a.expose().starts_with(TOKEN_PREFIX));
        assert_eq!(a.expose().len(), TOKEN_PREFIX.len() + 43);
        assert!(!format!("{a:?}").contains(a.expose()));
        assert!(a.hash().matches(&TokenHash::of(a.expose())));
    }
}
