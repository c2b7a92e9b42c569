//! The `read_attachment` tool: the model reads a text attachment of the conversation by id,
//! a bounded piece at a time (a long file is inlined only in part; this reads on). Only
//! attachments of the run's session, or of a line it branched from, are found.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{Tool, ToolCall, ToolContext, ToolSpec};
use crate::domain::SessionId;
use crate::store::{Store, CHUNK_BYTES};

/// The most bytes one call returns.
pub const MAX_READ: u64 = 64 * 1024;

/// An attachment as the tool reads it: its name, type, size, and the bytes asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub name: String,
    pub media_type: String,
    pub bytes: u64,
    pub data: Vec<u8>,
}

/// What reading a piece of an attachment comes to: the piece if it is there, or why not.
pub type PieceRead = BoxFuture<'static, Result<Option<Piece>, String>>;

/// Where the tool reads attachments (the store, behind a trait object so the tool
/// registry stays free of the store's type).
pub trait AttachmentSource: Send + Sync + 'static {
    /// Bytes `offset..offset + length` of attachment `id` of `session`'s line, if it is
    /// there.
    fn read(&self, session: SessionId, id: String, offset: u64, length: u64) -> PieceRead;
}

/// The store as an [`AttachmentSource`].
pub struct StoredAttachments<S>(pub Arc<S>);

impl<S: Store> AttachmentSource for StoredAttachments<S> {
    fn read(&self, session: SessionId, id: String, offset: u64, length: u64) -> PieceRead {
        let store = self.0.clone();
        Box::pin(async move {
            let found = store.attachment_in_line(session, &id).await;
            let Some(row) = found.map_err(|e| e.to_string())? else {
                return Ok(None);
            };
            let end = row.bytes.min(offset.saturating_add(length));
            let mut data = Vec::new();
            if offset < end {
                let chunk = CHUNK_BYTES as u64;
                let (first, last) = (offset / chunk, (end - 1) / chunk);
                let count = (last - first + 1) as u32;
                let chunks = store.blob_chunks(&row.blob, first as u32, count).await;
                let joined: Vec<u8> = chunks.map_err(|e| e.to_string())?.concat();
                let from = (offset - first * chunk) as usize;
                let to = (end - first * chunk) as usize;
                data = joined
                    .get(from..to.min(joined.len()))
                    .unwrap_or_default()
                    .to_vec();
            }
            Ok(Some(Piece {
                name: row.name,
                media_type: row.media_type,
                bytes: row.bytes,
                data,
            }))
        })
    }
}

/// Reads text attachments.
pub struct ReadAttachment {
    source: Arc<dyn AttachmentSource>,
}

impl ReadAttachment {
    /// The tool, reading from `source`.
    pub fn new(source: Arc<dyn AttachmentSource>) -> Self {
        Self { source }
    }
}

impl Tool for ReadAttachment {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "read_attachment".into(),
            description: format!(
                "Reads a text file the person attached, by its id (the `id` of an <attachment> \
                 in the conversation), at most {MAX_READ} bytes per call from `offset`; \
                 `nextOffset` says where to go on."
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "minLength": 1, "maxLength": 100},
                    "offset": {"type": "integer", "minimum": 0},
                    "length": {"type": "integer", "minimum": 1, "maximum": MAX_READ},
                },
                "required": ["id"],
                "additionalProperties": false,
            }),
        }
    }

    fn call(&self, arguments: Value, context: &ToolContext) -> ToolCall {
        let source = self.source.clone();
        let session = context.session;
        Box::pin(async move {
            let id = arguments["id"].as_str().unwrap_or_default().to_string();
            let offset = arguments["offset"].as_u64().unwrap_or(0);
            let length = arguments["length"]
                .as_u64()
                .unwrap_or(MAX_READ)
                .min(MAX_READ);
            let piece = source.read(session, id.clone(), offset, length).await?;
            let piece = piece.ok_or_else(|| format!("no attachment {id} in this conversation"))?;
            let text_like = crate::attachments::media::is_text(&piece.media_type)
                || piece.media_type == "application/octet-stream";
            let text = match std::str::from_utf8(&piece.data) {
                Ok(text) if text_like => text.to_string(),
                // A cut in the middle of a character: the valid part, the rest next time.
                Err(e) if text_like && e.error_len().is_none() => {
                    String::from_utf8_lossy(&piece.data[..e.valid_up_to()]).into_owned()
                }
                _ => {
                    return Err(format!(
                        "{} is {}, not text: it cannot be read as text",
                        piece.name, piece.media_type
                    ))
                }
            };
            let next = offset + text.len() as u64;
            let mut result = json!({
                "name": piece.name,
                "mediaType": piece.media_type,
                "bytes": piece.bytes,
                "offset": offset,
                "text": text,
            });
            if next < piece.bytes {
                result["nextOffset"] = json!(next);
            }
            Ok(result)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attachments::{Upload, UploadLimits};
    use crate::domain::{UserId, UserName};
    use crate::store::temp_store;
    use crate::store::{AttachmentRow, EventLog};

    #[tokio::test]
    async fn reads_a_text_attachment_of_the_conversation_piece_by_piece() {
        let (_dir, store) = temp_store().await;
        let store = Arc::new(store);
        let (session, elsewhere) = (SessionId::generate(), SessionId::generate());
        for id in [session, elsewhere] {
            store
                .create_session(UserId::LOCAL, id, None, 0)
                .await
                .unwrap();
        }
        // Three chunks and a bit, each line numbered, one character of two bytes.
        let text: String = (0..40_000).map(|n| format!("é{n}\n")).collect();
        let limits = UploadLimits {
            max_bytes: 1 << 24,
            quota_bytes: 1 << 26,
        };
        let row = |id: &str, session| AttachmentRow {
            id: id.into(),
            owner: UserId::LOCAL,
            session,
            name: "lines.txt".into(),
            blob: String::new(),
            media_type: String::new(),
            bytes: 0,
            sha256: String::new(),
            created_at: 0,
        };
        Upload::whole(
            &*store,
            "text/plain",
            text.as_bytes(),
            row("att_1", session),
            limits,
        )
        .await
        .unwrap();
        Upload::whole(&*store, "image/png", PNG, row("att_2", session), limits)
            .await
            .unwrap();
        let tool = ReadAttachment::new(Arc::new(StoredAttachments(store.clone())));
        let context = ToolContext {
            user: UserName::parse("ann").unwrap(),
            session,
            owner: UserId::LOCAL,
        };
        let mut read = String::new();
        let mut offset = 0;
        loop {
            let result = tool
                .call(json!({"id": "att_1", "offset": offset}), &context)
                .await
                .unwrap();
            read.push_str(result["text"].as_str().unwrap());
            assert!(result["text"].as_str().unwrap().len() as u64 <= MAX_READ);
            match result["nextOffset"].as_u64() {
                Some(next) => offset = next,
                None => break,
            }
        }
        assert_eq!(
            read, text,
            "every piece, in order, none cut inside a character"
        );
        let image = tool
            .call(json!({"id": "att_2"}), &context)
            .await
            .unwrap_err();
        assert!(image.contains("not text"), "{image}");
        let other = ToolContext {
            session: elsewhere,
            ..context
        };
        let missing = tool.call(json!({"id": "att_1"}), &other).await.unwrap_err();
        assert!(missing.contains("no attachment"), "{missing}");
    }

    const PNG: &[u8] =
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";
}
