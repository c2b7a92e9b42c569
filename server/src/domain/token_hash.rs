//! [`TokenHash`]: what is stored of a bearer secret (an API token or a sign-in cookie).
//!
//! Secrets are 256 random bits, so a plain SHA-256 is the right hash: nothing to guess, no
//! need for a slow KDF. A leaked database row cannot be replayed as a credential.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The SHA-256 of a secret.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenHash([u8; 32]);

impl TokenHash {
    /// Hashes a secret's text.
    pub fn of(secret: &str) -> Self {
        Self(Sha256::digest(secret.as_bytes()).into())
    }

    /// A stored hash; `None` unless it is 32 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }

    /// The raw bytes, for storage.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Compares in constant time, so the comparison leaks nothing about where two hashes
    /// differ.
    pub fn matches(&self, other: &TokenHash) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl std::fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenHash(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_secrets_match_and_others_do_not() {
        let a = TokenHash::of("tdm_secret");
        assert!(a.matches(&TokenHash::of("tdm_secret")));
        assert!(!a.matches(&TokenHash::of("tdm_secreT")));
        assert_eq!(TokenHash::from_bytes(a.as_bytes()), Some(a));
        assert_eq!(TokenHash::from_bytes(&[0; 31]), None);
        assert_eq!(format!("{a:?}"), "TokenHash(…)");
    }
}
