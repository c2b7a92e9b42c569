//! Users and their secrets: the rows every backend returns, and the trait that keeps them.

use std::future::Future;

use super::StoreError;
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

/// Users and their secrets: creating and revoking users with their first API token,
/// reading them, the user a token or a browser sign-in acts for, signing in and out.
pub trait Users: Send + Sync + 'static {
    /// Creates a user with its first API token (only the token's hash is given); false if
    /// the name is taken (also by a revoked user).
    fn create_user(
        &self,
        id: UserId,
        name: &UserName,
        token: TokenHash,
        now_ms: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// One user, revoked or not.
    fn user(&self, id: UserId) -> impl Future<Output = Result<Option<UserRow>, StoreError>> + Send;

    /// Every user, `local` included, oldest first.
    fn list_users(&self) -> impl Future<Output = Result<Vec<UserRow>, StoreError>> + Send;

    /// Revokes a user: their tokens and sign-ins are deleted and they cannot sign in
    /// again; their sessions stay. [`Ending::UserRevoked`](super::Ending::UserRevoked) is
    /// announced to every process sharing the database. False if no active user has that
    /// name.
    fn revoke_user(
        &self,
        name: &UserName,
        now_ms: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// The active user an API token belongs to, with the stored hash that matched.
    fn user_for_token(
        &self,
        token: TokenHash,
    ) -> impl Future<Output = Result<Option<(UserRow, TokenHash)>, StoreError>> + Send;

    /// Records a browser sign-in (the hash of its cookie) valid until `expires_at_ms`;
    /// expired sign-ins are deleted on the way.
    fn create_sign_in(
        &self,
        cookie: TokenHash,
        user: UserId,
        now_ms: i64,
        expires_at_ms: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The active user of an unexpired sign-in, with the stored hash that matched and the
    /// sign-in's expiry.
    fn user_for_sign_in(
        &self,
        cookie: TokenHash,
        now_ms: i64,
    ) -> impl Future<Output = Result<Option<SignInMatch>, StoreError>> + Send;

    /// Deletes a sign-in (signing out), announcing
    /// [`Ending::SignedOut`](super::Ending::SignedOut) to the other processes sharing the
    /// database in the same transaction; false if there was none.
    fn delete_sign_in(
        &self,
        cookie: TokenHash,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}
