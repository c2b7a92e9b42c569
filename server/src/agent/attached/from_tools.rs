//! Files an MCP tool returns (image content, embedded resources): kept as attachments of
//! the session before the result is logged, so the page shows them and the log holds ids,
//! not megabytes of base64. The result's `otherContent` entries then name each by its
//! `attachment` id; one that cannot be kept (the owner's quota, bytes that are not what
//! they claim) says why in `notKept`, and the call's result stands.

use base64::Engine as _;
use serde_json::{json, Value};
use shared::attachments::{Attachment, MAX_PER_MESSAGE};

use super::as_attachment;
use crate::attachments::{Upload, UploadLimits};
use crate::domain::{new_id, now_ms, SessionId, UserId};
use crate::store::{AttachmentRow, Store};

/// Where the files go: whose they are, which session, under which limits.
pub struct Keeper<'a, S> {
    pub store: &'a S,
    pub owner: UserId,
    pub session: SessionId,
    pub limits: UploadLimits,
}

impl<S: Store> Keeper<'_, S> {
    /// `content` (a tool's result as JSON text) with the files of its `otherContent` kept,
    /// and the attachments they became (none when it carries none).
    pub async fn keep(&self, content: String) -> (String, Vec<Attachment>) {
        let Ok(mut result) = serde_json::from_str::<Value>(&content) else {
            return (content, Vec::new());
        };
        let Some(others) = result.get_mut("otherContent").and_then(Value::as_array_mut) else {
            return (content, Vec::new());
        };
        let mut kept = Vec::new();
        for (n, entry) in others.iter_mut().enumerate() {
            let Some(bytes) = bytes_of(entry) else {
                continue;
            };
            if kept.len() == MAX_PER_MESSAGE {
                *entry = described(
                    entry,
                    json!({"notKept": "more files than a message may carry"}),
                );
                continue;
            }
            let name = name_of(entry, n);
            match self.store_file(&name, entry, &bytes).await {
                Ok(attachment) => {
                    *entry = described(entry, json!({"attachment": attachment.id, "name": name}));
                    kept.push(attachment);
                }
                Err(why) => *entry = described(entry, json!({"notKept": why})),
            }
        }
        (result.to_string(), kept)
    }

    async fn store_file(
        &self,
        name: &str,
        entry: &Value,
        bytes: &[u8],
    ) -> Result<Attachment, String> {
        let declared = entry["mimeType"]
            .as_str()
            .unwrap_or("application/octet-stream");
        let row = AttachmentRow {
            id: new_id("att"),
            owner: self.owner,
            session: self.session,
            name: name.to_string(),
            blob: String::new(),
            media_type: String::new(),
            bytes: 0,
            sha256: String::new(),
            created_at: now_ms(),
        };
        let stored = Upload::whole(self.store, declared, bytes, row, self.limits).await;
        stored.map(as_attachment).map_err(|error| error.to_string())
    }
}

/// The bytes an entry carries: base64 `data`, or a text resource's `text`.
fn bytes_of(entry: &Value) -> Option<Vec<u8>> {
    if let Some(data) = entry["data"].as_str() {
        return base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .ok();
    }
    entry["text"].as_str().map(|text| text.as_bytes().to_vec())
}

/// The entry without its bytes, with `extra`.
fn described(entry: &Value, extra: Value) -> Value {
    let mut out = json!({});
    for key in ["type", "mimeType", "uri"] {
        if let Some(value) = entry.get(key) {
            out[key] = value.clone();
        }
    }
    if let (Some(out), Some(extra)) = (out.as_object_mut(), extra.as_object()) {
        out.extend(extra.clone());
    }
    out
}

/// A file name for the `n`-th entry: a resource's last URI segment, else its kind and an
/// extension from its type (`image-1.png`).
fn name_of(entry: &Value, n: usize) -> String {
    let from_uri = entry["uri"]
        .as_str()
        .and_then(|uri| uri.rsplit(['/', ':']).next())
        .filter(|last| !last.is_empty() && last.len() <= 100);
    if let Some(name) = from_uri {
        return name.replace('\\', "_");
    }
    let kind = entry["type"].as_str().unwrap_or("file");
    let extension = entry["mimeType"]
        .as_str()
        .and_then(|mime| mime.split('/').nth(1))
        .map(|sub| sub.split(['+', ';']).next().unwrap_or(sub))
        .filter(|sub| sub.len() <= 8 && sub.chars().all(|c| c.is_ascii_alphanumeric()))
        .unwrap_or("bin");
    format!("{kind}-{}.{extension}", n + 1)
}
