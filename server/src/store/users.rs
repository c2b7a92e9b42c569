//! The user rows every backend returns.

use crate::domain::{TokenHash, UserId, UserName};

/// A user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRow {
    pub id: UserId,
    pub name: UserName,
    pub created_at: i64,
    /// When they were revoked, if they were.
    pub revoked_at: Option<i64>,
}

/// The user of an unexpired sign-in, the stored hash that matched, and when it expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInMatch {
    pub user: UserRow,
    pub stored: TokenHash,
    pub expires_at_ms: i64,
}
