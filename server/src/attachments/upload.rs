//! An upload as it streams in: the bytes go to the store chunk by chunk (never more than a
//! chunk held), hashed on the way, their media type read from the first chunk, the size
//! and the owner's quota checked as they arrive. A refused or broken upload leaves nothing:
//! its blob is dropped, and one a crash cut short is purged once it stops moving.

use sha2::{Digest, Sha256};

use super::media;
use crate::domain::{now_ms, UserId};
use crate::store::{AttachmentRow, Counted, FinishedUpload, Store, StoreError, CHUNK_BYTES};

/// Chunks between two counts of an upload's bytes (2 MiB).
const COUNT_EVERY: u32 = 8;
/// The longest an upload that moves goes without a count (far below the purge's stall).
const COUNT_AFTER_MS: i64 = 5_000;

/// How big an upload and a user's attachments together may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadLimits {
    /// Largest attachment, in bytes (`--max-attachment-bytes`).
    pub max_bytes: u64,
    /// What one user's attachments may take together, in bytes (`--attachment-quota-bytes`).
    pub quota_bytes: u64,
}

/// Why an upload was refused.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("the file is larger than {0} bytes")]
    TooLarge(u64),
    #[error("your attachments already take {used} of your {quota} bytes")]
    Quota { used: u64, quota: u64 },
    #[error("{0}")]
    Media(String),
    #[error("the file is empty")]
    Empty,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One upload in progress.
pub struct Upload<'a, S> {
    store: &'a S,
    owner: UserId,
    blob: String,
    declared: String,
    /// The stored media type, once the first chunk was read (and the blob begun).
    media_type: Option<String>,
    pending: Vec<u8>,
    chunks: u32,
    bytes: u64,
    /// Bytes stored in chunks so far.
    stored: u64,
    /// When they were last counted in the store.
    counted_at: i64,
    hash: Sha256,
    used_before: u64,
    limits: UploadLimits,
}

impl<'a, S: Store> Upload<'a, S> {
    /// An upload of `owner`'s declared as `declared`; refused at once when the owner's
    /// attachments already fill their quota.
    pub async fn begin(
        store: &'a S,
        owner: UserId,
        declared: &str,
        limits: UploadLimits,
    ) -> Result<Self, UploadError> {
        let used_before = store.stored_bytes(owner).await?;
        if used_before >= limits.quota_bytes {
            return Err(UploadError::Quota {
                used: used_before,
                quota: limits.quota_bytes,
            });
        }
        Ok(Self {
            store,
            owner,
            blob: crate::domain::new_id("blb"),
            declared: declared.to_string(),
            media_type: None,
            pending: Vec::with_capacity(CHUNK_BYTES),
            chunks: 0,
            bytes: 0,
            stored: 0,
            counted_at: 0,
            hash: Sha256::new(),
            used_before,
            limits,
        })
    }

    /// Takes the next bytes of the body.
    pub async fn push(&mut self, mut bytes: &[u8]) -> Result<(), UploadError> {
        self.bytes += bytes.len() as u64;
        if self.bytes > self.limits.max_bytes {
            return Err(UploadError::TooLarge(self.limits.max_bytes));
        }
        if self.used_before + self.bytes > self.limits.quota_bytes {
            return Err(UploadError::Quota {
                used: self.used_before,
                quota: self.limits.quota_bytes,
            });
        }
        while !bytes.is_empty() {
            let room = CHUNK_BYTES - self.pending.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.pending.extend_from_slice(now);
            bytes = later;
            if self.pending.len() == CHUNK_BYTES {
                self.flush().await?;
            }
        }
        Ok(())
    }

    /// Stores the chunk held; the first also decides the media type and begins the blob.
    async fn flush(&mut self) -> Result<(), UploadError> {
        if self.media_type.is_none() {
            let found =
                media::media_type(&self.declared, &self.pending).map_err(UploadError::Media)?;
            self.store
                .begin_blob(self.owner, &self.blob, &found, now_ms())
                .await?;
            self.media_type = Some(found);
        }
        self.hash.update(&self.pending);
        self.stored += self.pending.len() as u64;
        // The first chunk, every [`COUNT_EVERY`]th after it, and any after a pause of
        // [`COUNT_AFTER_MS`] count the bytes (for the quota of uploads running side by side,
        // and so that a slow upload never looks stalled to the purge).
        let now = now_ms();
        let due =
            self.chunks.is_multiple_of(COUNT_EVERY) || now - self.counted_at >= COUNT_AFTER_MS;
        let counted = due.then(|| {
            self.counted_at = now;
            Counted {
                bytes: self.stored,
                at_ms: now,
            }
        });
        self.store
            .put_chunk(&self.blob, self.chunks, &self.pending, counted)
            .await?;
        self.chunks += 1;
        self.pending.clear();
        Ok(())
    }

    /// Stores what is left and records the attachment `attachment` names (its id, session
    /// and name; the rest is filled in here); returns it as stored.
    pub async fn finish(
        mut self,
        mut attachment: AttachmentRow,
    ) -> Result<AttachmentRow, UploadError> {
        if self.bytes == 0 {
            return Err(UploadError::Empty);
        }
        if !self.pending.is_empty() {
            self.flush().await?;
        }
        let sha256 = format!("{:x}", std::mem::take(&mut self.hash).finalize());
        attachment.media_type = self.media_type.take().unwrap_or_default();
        attachment.bytes = self.bytes;
        attachment.sha256 = sha256.clone();
        let upload = FinishedUpload {
            blob: self.blob.clone(),
            sha256,
            bytes: self.bytes,
            attachment,
        };
        let blob = self.store.finish_upload(&upload).await?;
        Ok(AttachmentRow {
            blob,
            ..upload.attachment
        })
    }

    /// Stores `bytes` whole (a file that came inside another body, as an AG-UI client's
    /// binary part does) as the attachment `attachment` names.
    pub async fn whole(
        store: &'a S,
        declared: &str,
        bytes: &[u8],
        attachment: AttachmentRow,
        limits: UploadLimits,
    ) -> Result<AttachmentRow, UploadError> {
        let mut upload = Self::begin(store, attachment.owner, declared, limits).await?;
        if let Err(error) = upload.push(bytes).await {
            upload.abandon().await;
            return Err(error);
        }
        upload.finish(attachment).await
    }

    /// Drops what was stored of an upload that will not finish (best effort: what stays
    /// is purged once it stops moving).
    pub async fn abandon(&self) {
        if self.media_type.is_none() {
            return;
        }
        if let Err(error) = self.store.drop_blob(&self.blob).await {
            tracing::warn!(%error, blob = self.blob, "could not drop an abandoned upload");
        }
    }
}
