//! Files and images attached to a session: what an upload answers.

use serde::{Deserialize, Serialize};

/// The most attachments one message may carry.
pub const MAX_PER_MESSAGE: usize = 10;

/// `POST /api/sessions/{id}/attachments` → 201: the attachment as stored.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    /// Its id: `GET /api/attachments/{id}` serves it.
    pub id: String,
    /// The file's name as uploaded.
    pub name: String,
    /// What its bytes are (read from the bytes, not taken from the client).
    pub media_type: String,
    pub bytes: u64,
    /// Hex SHA-256 of the bytes (also the download's `ETag`).
    pub sha256: String,
}

/// A [`crate::custom::ATTACHMENTS`] event's value: the attachments of one message, or of
/// one tool result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageAttachments {
    /// The person's message, or the tool result, that carries them.
    pub message_id: String,
    pub attachments: Vec<Attachment>,
    /// The tool call whose result returned them (an MCP tool's images and resources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// A size as people read it: `900 bytes`, `18 KB`, `3.4 MB`.
pub fn human_size(bytes: u64) -> String {
    const KB: u64 = 1024;
    if bytes < KB {
        format!("{bytes} bytes")
    } else if bytes < KB * KB {
        format!("{} KB", (bytes + KB / 2) / KB)
    } else {
        format!("{} MB", crate::decimal::tenths(bytes, KB * KB))
    }
}
