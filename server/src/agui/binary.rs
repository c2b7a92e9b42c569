//! An AG-UI client's files in a user message, in either shape clients send: AG-UI 1.0's
//! media parts (`{type: "image" | "document" | "audio" | "video", source: {type: "data",
//! value, mimeType} | {type: "url", value, mimeType?} | {type: "file", value}}`, the file's
//! name in `metadata.filename`) and the earlier draft's `binary` part (`{type: "binary",
//! mimeType, data | url | id, filename?}`). Bytes (`data`) are stored like an upload; an id
//! (`id`, a `file` source) names an attachment uploaded to the thread (or a line it
//! branched from); a URL is fetched only from an origin `--attachment-url-origins` lists
//! (see [`crate::attachments::fetch`]). The run's recorded input then names each by its
//! stored id instead of carrying its bytes (a `binary` part by `id`, a media part by a
//! `file` source with `provider: "tandem"`), and the message's attachments are recorded as
//! `CUSTOM tandem.attachments` like any message's.

use base64::Engine as _;
use reqwest::Url;
use serde_json::{json, Value};
use shared::attachments::{Attachment, MAX_PER_MESSAGE};

use super::input::InputMessage;
use crate::agent::attached::as_attachment;
use crate::attachments::fetch::{fetch_into, FetchError};
use crate::attachments::Upload;
use crate::domain::{new_id, now_ms, SessionId, UserId};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::{AttachmentRow, Store};

/// Where a part's bytes are.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    Id(String),
    Url(Url),
    Data(Vec<u8>),
}

/// One binary part, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct BinaryPart {
    mime_type: String,
    filename: Option<String>,
    source: Source,
}

/// The part types that carry a file.
pub const FILE_PARTS: [&str; 5] = ["binary", "image", "document", "audio", "video"];

/// The binary parts of a user message, checked (at most [`MAX_PER_MESSAGE`]; each a
/// `mimeType` and one of `id`, `url` or base64 `data`).
pub fn parts(message: &InputMessage) -> Result<Vec<BinaryPart>, ApiError> {
    let Some(Value::Array(parts)) = &message.content else {
        return Ok(Vec::new());
    };
    let binary: Vec<&Value> = parts.iter().filter(|p| is_file_part(p)).collect();
    if binary.len() > MAX_PER_MESSAGE {
        return Err(invalid(format!(
            "message {}: at most {MAX_PER_MESSAGE} binary parts",
            message.id
        )));
    }
    binary
        .into_iter()
        .map(|part| part_of(&message.id, part))
        .collect()
}

/// Whether `part` carries a file.
fn is_file_part(part: &Value) -> bool {
    part["type"]
        .as_str()
        .is_some_and(|kind| FILE_PARTS.contains(&kind))
}

fn part_of(message: &str, part: &Value) -> Result<BinaryPart, ApiError> {
    if part["type"] != "binary" {
        return media_part_of(message, part);
    }
    let text = |key: &str| part.get(key).and_then(Value::as_str);
    let mime_type = text("mimeType")
        .ok_or_else(|| invalid(format!("message {message}: a binary part needs a mimeType")))?;
    let source = match (text("id"), text("url"), text("data")) {
        (Some(id), _, _) => Source::Id(id.to_string()),
        (None, _, Some(data)) => Source::Data(checked_data(message, mime_type, data)?),
        (None, Some(url), None) => Source::Url(Url::parse(url).map_err(|e| {
            invalid(format!(
                "message {message}: a binary part's url does not parse ({e})"
            ))
        })?),
        (None, None, None) => {
            return Err(invalid(format!(
                "message {message}: a binary part needs data, url or id"
            )))
        }
    };
    Ok(BinaryPart {
        mime_type: mime_type.to_string(),
        filename: text("filename").map(str::to_string),
        source,
    })
}

/// An AG-UI 1.0 media part (`image`, `document`, `audio`, `video`) and its `source`.
fn media_part_of(message: &str, part: &Value) -> Result<BinaryPart, ApiError> {
    let source = &part["source"];
    let text = |key: &str| source.get(key).and_then(Value::as_str);
    let kind = part["type"].as_str().unwrap_or_default();
    let value = text("value").ok_or_else(|| {
        invalid(format!(
            "message {message}: a {kind} part needs a source with a value"
        ))
    })?;
    let declared = text("mimeType").unwrap_or("application/octet-stream");
    let source = match text("type") {
        Some("data") => {
            let mime_type = text("mimeType").ok_or_else(|| {
                invalid(format!("message {message}: a data source needs a mimeType"))
            })?;
            Source::Data(checked_data(message, mime_type, value)?)
        }
        Some("url") => Source::Url(Url::parse(value).map_err(|e| {
            invalid(format!(
                "message {message}: a {kind} part's url does not parse ({e})"
            ))
        })?),
        Some("file") if matches!(text("provider"), None | Some("tandem")) => {
            Source::Id(value.to_string())
        }
        Some("file") => {
            return Err(invalid(format!(
                "message {message}: a file source of another provider cannot be read here; \
                 send the bytes, or upload them and name the attachment"
            )))
        }
        _ => {
            return Err(invalid(format!(
                "message {message}: a {kind} part's source is data, url or file"
            )))
        }
    };
    let filename = part["metadata"]["filename"].as_str().map(str::to_string);
    Ok(BinaryPart {
        mime_type: declared.to_string(),
        filename,
        source,
    })
}

/// A part's `data`, decoded and checked as an upload's first chunk is (not empty, its
/// bytes what `mime_type` says), so a bad one is refused before anything is written.
fn checked_data(message: &str, mime_type: &str, data: &str) -> Result<Vec<u8>, ApiError> {
    let refused = |why: String| {
        ApiError::InvalidAttachment(format!("message {message}: a binary part's data {why}"))
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| refused(format!("is not base64 ({e})")))?;
    if bytes.is_empty() {
        return Err(refused("is empty".into()));
    }
    let head = &bytes[..bytes.len().min(crate::store::CHUNK_BYTES)];
    crate::attachments::media::media_type(mime_type, head)
        .map_err(|why| refused(format!("is refused: {why}")))?;
    Ok(bytes)
}

/// The attachments the parts will be, as far as is known before anything is stored (for
/// the checks a message passes first: a message of files alone is not empty).
pub fn expected(parts: &[BinaryPart]) -> Vec<Attachment> {
    parts
        .iter()
        .map(|part| Attachment {
            id: String::new(),
            name: file_name(part),
            media_type: part.mime_type.clone(),
            bytes: 0,
            sha256: String::new(),
        })
        .collect()
}

/// Stores (or finds) each part for a message to `session` of `owner`; the attachments,
/// in order.
pub async fn store<S: Store>(
    state: &AppState<S>,
    session: SessionId,
    owner: UserId,
    parts: Vec<BinaryPart>,
) -> Result<Vec<Attachment>, ApiError> {
    let mut stored = Vec::with_capacity(parts.len());
    for part in parts {
        let attachment = AttachmentRow {
            id: new_id("att"),
            owner,
            session,
            name: file_name(&part),
            blob: String::new(),
            media_type: String::new(),
            bytes: 0,
            sha256: String::new(),
            created_at: now_ms(),
        };
        let limits = state.attachments;
        let row = match part.source {
            Source::Id(id) => {
                let found = state.runner.attachments(session, &[id]).await?;
                stored.extend(found);
                continue;
            }
            Source::Data(bytes) => {
                let upload =
                    Upload::whole(&*state.store, &part.mime_type, &bytes, attachment, limits);
                upload.await?
            }
            Source::Url(url) if !state.url_origins.allows(&url) => {
                return Err(invalid(format!(
                    "a binary part's url is fetched only from the origins --attachment-url-origins \
                     lists (a server that fetches any URL it is sent can be turned against its own \
                     network); send the bytes as data, or upload them and send the id. Not {}",
                    url.origin().ascii_serialization()
                )))
            }
            Source::Url(url) => {
                let fetched = fetch_into(&*state.store, &url, &part.mime_type, attachment, limits);
                fetched.await.map_err(|error| match error {
                    FetchError::Refused(why) => ApiError::InvalidAttachment(why),
                    FetchError::Upload(error) => error.into(),
                })?
            }
        };
        stored.push(as_attachment(row));
    }
    Ok(stored)
}

/// `recorded` (a run's recorded input) with the binary parts of message `message_id`
/// naming the attachments `stored` (in order) by id instead of carrying their bytes.
pub fn recorded_with(mut recorded: Value, message_id: &str, stored: &[Attachment]) -> Value {
    let messages = recorded.get_mut("messages").and_then(Value::as_array_mut);
    let message = messages
        .into_iter()
        .flatten()
        .find(|m| m["id"] == message_id);
    let parts = message
        .and_then(|m| m.get_mut("content"))
        .and_then(Value::as_array_mut);
    let files = parts.into_iter().flatten().filter(|p| is_file_part(p));
    for (part, attachment) in files.zip(stored) {
        *part = match part["type"].as_str() {
            Some("binary") => json!({
                "type": "binary",
                "mimeType": attachment.media_type,
                "id": attachment.id,
                "filename": attachment.name,
            }),
            kind => json!({
                "type": kind,
                "source": {"type": "file", "value": attachment.id, "provider": "tandem",
                           "mimeType": attachment.media_type},
                "metadata": {"filename": attachment.name},
            }),
        };
    }
    recorded
}

/// The name a part's file is kept under: its `filename`, else the URL's last segment,
/// else `attachment`; never a path, at most 255 characters.
fn file_name(part: &BinaryPart) -> String {
    let from_url = match &part.source {
        Source::Url(url) => url
            .path_segments()
            .and_then(|mut s| s.next_back())
            .map(str::to_string),
        _ => None,
    };
    let name = part.filename.clone().or(from_url).unwrap_or_default();
    let clean: String = name
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .take(255)
        .collect();
    match clean.trim() {
        "" => "attachment".into(),
        name => name.to_string(),
    }
}

fn invalid(message: String) -> ApiError {
    ApiError::InvalidMessage(message)
}
