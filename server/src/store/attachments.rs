//! Files and images people attach: the store's third part. The bytes are a *blob*, stored
//! once per user and content (SHA-256) in chunks of [`CHUNK_BYTES`], so neither an upload
//! nor a download holds a whole file in memory; each upload is an *attachment*, a name in a
//! session pointing at a blob. A blob goes when no attachment refers to it (its sessions
//! were deleted), and an upload a crash cut short goes once it stopped moving
//! ([`Attachments::purge_blobs`]).

use std::future::Future;

use super::StoreError;
use crate::domain::{SessionId, UserId};

/// Bytes per stored chunk.
pub const CHUNK_BYTES: usize = 256 * 1024;

/// What became of a chunk offered to [`Attachments::put_chunk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkStored {
    /// Stored, and counted against its owner's quota.
    Stored,
    /// Not stored: the owner's blobs, complete and being uploaded, already take `used`
    /// bytes, and this chunk would take them past the quota.
    OverQuota { used: u64 },
}

/// An attachment with what its blob says of the bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct AttachmentRow {
    pub id: String,
    pub owner: UserId,
    pub session: SessionId,
    pub name: String,
    pub blob: String,
    pub media_type: String,
    pub bytes: u64,
    /// Hex SHA-256 of the bytes (the download's ETag).
    pub sha256: String,
    pub created_at: i64,
}

/// A finished upload: its blob, the bytes' hash and size, and the attachment to record.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedUpload {
    pub blob: String,
    pub sha256: String,
    pub bytes: u64,
    pub attachment: AttachmentRow,
}

/// Storing and reading attachments.
pub trait Attachments: Send + Sync + 'static {
    /// Starts a blob of `owner` that chunks are then added to (incomplete until finished).
    fn begin_blob(
        &self,
        owner: UserId,
        blob: &str,
        media_type: &str,
        now_ms: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Stores chunk `n` (0, 1, 2, …) of `owner`'s blob being uploaded and counts its bytes
    /// (the blob moved at `now_ms`, for the purge of stalled uploads), unless the owner's
    /// blobs would then take more than `quota` bytes. The count and the check are one
    /// transaction that waits for any other of the same owner's (a lock on the owner), so
    /// uploads side by side, on any number of instances, never pass the quota together.
    fn put_chunk(
        &self,
        owner: UserId,
        blob: &str,
        n: u32,
        data: &[u8],
        quota: u64,
        now_ms: i64,
    ) -> impl Future<Output = Result<ChunkStored, StoreError>> + Send;

    /// Completes a blob and records its attachment, in one transaction. When the owner
    /// already holds a complete blob of the same content, this one is dropped and the
    /// attachment names that one. Returns the blob the attachment names.
    fn finish_upload(
        &self,
        upload: &FinishedUpload,
    ) -> impl Future<Output = Result<String, StoreError>> + Send;

    /// Drops a blob (an upload that failed or was refused), with its chunks.
    fn drop_blob(&self, blob: &str) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// One attachment, if it exists.
    fn attachment(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<AttachmentRow>, StoreError>> + Send;

    /// Attachment `id` if it was uploaded to `session` or to a line `session` branched
    /// from (its history's sessions, deleted ones that it still reads from included).
    fn attachment_in_line(
        &self,
        session: SessionId,
        id: &str,
    ) -> impl Future<Output = Result<Option<AttachmentRow>, StoreError>> + Send;

    /// Up to `count` chunks of a blob from chunk `from` on, in order.
    fn blob_chunks(
        &self,
        blob: &str,
        from: u32,
        count: u32,
    ) -> impl Future<Output = Result<Vec<Vec<u8>>, StoreError>> + Send;

    /// Bytes `owner`'s blobs take, complete and being uploaded (each chunk counted as it
    /// is stored).
    fn stored_bytes(&self, owner: UserId) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Bytes every user's complete blobs take (each stored once).
    fn all_stored_bytes(&self) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// Deletes complete blobs made before `unreferenced_before_ms` that no attachment refers
    /// to, and incomplete ones that stopped moving before `stalled_before_ms`; how many.
    fn purge_blobs(
        &self,
        unreferenced_before_ms: i64,
        stalled_before_ms: i64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}
