//! An upload as it streams in: the bytes go to the store chunk by chunk (never more than a
//! chunk held), hashed on the way, their media type read from the first chunk, the size
//! checked as they arrive. Each chunk is counted against the owner's quota in the
//! transaction that stores it ([`crate::store::Attachments::put_chunk`]), so uploads side
//! by side never take more than the quota together, whatever their number or instance. A
//! refused or broken upload leaves nothing: its blob is dropped (and what it counted with
//! it), and one a crash cut short is purged once it stops moving.

use sha2::{Digest, Sha256};

use super::media;
use crate::domain::{now_ms, UserId};
use crate::store::{AttachmentRow, ChunkStored, FinishedUpload, Store, StoreError, CHUNK_BYTES};

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
    hash: Sha256,
    used_before: u64,
    limits: UploadLimits,
}

impl<'a, S: Store> Upload<'a, S> {
    /// An upload of `owner`'s declared as `declared`; refused at once when the owner's
    /// attachments already fill their quota (each chunk is checked again as it is stored).
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
        let stored = self.store.put_chunk(
            self.owner,
            &self.blob,
            self.chunks,
            &self.pending,
            self.limits.quota_bytes,
            now_ms(),
        );
        if let ChunkStored::OverQuota { used } = stored.await? {
            return Err(UploadError::Quota {
                used,
                quota: self.limits.quota_bytes,
            });
        }
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
        // Every attachment's name, whoever gave it (an upload, an AG-UI client's part, an
        // MCP tool's file), is one line a person reads.
        attachment.name = match shared::text::one_line(&attachment.name) {
            name if name.is_empty() => "file".into(),
            name => name,
        };
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
