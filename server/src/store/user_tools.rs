//! A person's own WebAssembly tools (`PUT /api/tools/{name}`): one row per user and
//! name, with the manifest as they sent it and the module's bytes, so every instance
//! has them.

use std::future::Future;

use super::StoreError;
use crate::domain::UserId;

/// One of a person's tools, without its module's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserToolRow {
    /// The tool's name (unique per user).
    pub name: String,
    /// The manifest, as JSON text.
    pub manifest: String,
    /// The SHA-256 of the module, in hex.
    pub digest: String,
    /// The module's size.
    pub module_bytes: i64,
    /// When it was last uploaded, in ms since the epoch.
    pub updated_at: i64,
}

/// Keeping a person's own tools.
pub trait UserTools: Send + Sync + 'static {
    /// `user`'s tools, by name.
    fn user_tools(
        &self,
        user: UserId,
    ) -> impl Future<Output = Result<Vec<UserToolRow>, StoreError>> + Send;

    /// The module of `user`'s tool `name` whose digest is `digest` (none once it was
    /// replaced or deleted).
    fn user_tool_module(
        &self,
        user: UserId,
        name: &str,
        digest: &str,
    ) -> impl Future<Output = Result<Option<Vec<u8>>, StoreError>> + Send;

    /// Adds `tool` to `user`'s tools, or replaces the one of its name; says whether it
    /// was added.
    fn put_user_tool(
        &self,
        user: UserId,
        tool: &UserToolRow,
        module: &[u8],
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Deletes `user`'s tool `name`; says whether there was one.
    fn delete_user_tool(
        &self,
        user: UserId,
        name: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}
