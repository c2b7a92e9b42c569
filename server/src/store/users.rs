//! The user rows every backend returns.

use crate::domain::{UserId, UserName};

/// A user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRow {
    pub id: UserId,
    pub name: UserName,
    pub created_at: i64,
    /// When they were revoked, if they were.
    pub revoked_at: Option<i64>,
}
