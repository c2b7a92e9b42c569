//! Files and images a person's message carries.
//!
//! A message names attachments by id; [`resolve`] checks each was uploaded to the session
//! or to a line it branched from, and the log records them with the message as
//! `CUSTOM tandem.attachments` ([`event`]), so the conversation ([`Attached`] in
//! `ChatMessage::User`), the page, exports and branches read them from the log like the
//! text. Before a model call, [`Loader`] reads the bytes of those in the model's view and
//! prepares them for it ([`content`]): images scaled to the provider's limits, PDFs as
//! documents, text inlined with its name, and a short note for what the model cannot
//! take. Nothing of them is held once the run ends.

pub mod content;
pub mod from_tools;
mod models;
mod pdf;
mod raster;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use shared::attachments::{Attachment, MessageAttachments, MAX_PER_MESSAGE};
use shared::EventBody;

pub use content::{Accepts, Content};
pub use models::ImageModels;
pub use pdf::page_count;
pub use raster::{kind, MAX_READ_EDGE};

use super::refusal::Refusal;
use crate::domain::SessionId;
use crate::store::{AttachmentRow, Store, StoreError};

/// An attachment of a person's message, as the model's conversation holds it: what the
/// log says of it, and, once a run loaded it for a model call, what the model gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Attached {
    pub attachment: Attachment,
    /// Filled by [`Loader::fill`] before a model call; `None` in a conversation as folded.
    pub content: Option<Arc<Content>>,
}

impl Attached {
    /// An attachment as the log names it, not loaded.
    pub fn named(attachment: Attachment) -> Self {
        Self {
            attachment,
            content: None,
        }
    }

    /// What a provider sends of it as text (a text file's contents with its name, a
    /// note), or `None` for an image or PDF, which travel as their own parts. An
    /// attachment not loaded is named.
    pub fn as_text(&self) -> Option<String> {
        let attachment = &self.attachment;
        match &self.content {
            Some(content) => content.as_text(attachment),
            None => Some(format!(
                "[attached: `{}` ({}, {})]",
                attachment.name,
                attachment.media_type,
                content::size(attachment.bytes)
            )),
        }
    }

    /// Its estimated size in a model's context, in tokens (from what the log says of it:
    /// the view is drawn before anything is loaded).
    pub fn estimated_tokens(&self) -> usize {
        content::estimated_tokens(&self.attachment)
    }
}

/// The attachments `ids` name, checked: at most [`MAX_PER_MESSAGE`], none twice, each
/// uploaded to `session` or to a line it branched from (else 404, as for another user's).
pub async fn resolve<S: Store>(
    store: &S,
    session: SessionId,
    ids: &[String],
) -> Result<Vec<Attachment>, Refusal> {
    if ids.len() > MAX_PER_MESSAGE {
        return Err(Refusal::InvalidMessage(format!(
            "a message may carry at most {MAX_PER_MESSAGE} attachments, not {}",
            ids.len()
        )));
    }
    let mut found = Vec::with_capacity(ids.len());
    for (n, id) in ids.iter().enumerate() {
        if ids[..n].contains(id) {
            return Err(Refusal::InvalidMessage(format!(
                "attachment {} is named twice",
                short(id)
            )));
        }
        let row = store.attachment_in_line(session, id).await?;
        let row = row.ok_or_else(|| {
            Refusal::NotFound(format!("no attachment {} in this conversation", short(id)))
        })?;
        found.push(as_attachment(row));
    }
    Ok(found)
}

/// An attachment row as the API and the log show it.
pub fn as_attachment(row: AttachmentRow) -> Attachment {
    Attachment {
        id: row.id,
        name: row.name,
        media_type: row.media_type,
        bytes: row.bytes,
        sha256: row.sha256,
    }
}

/// The event that records `attachments` with the message `message_id` (none when there
/// are none).
pub fn event(message_id: &str, attachments: &[Attachment]) -> Option<EventBody> {
    if attachments.is_empty() {
        return None;
    }
    let value = MessageAttachments {
        message_id: message_id.to_string(),
        attachments: attachments.to_vec(),
        tool_call_id: None,
    };
    Some(EventBody::Custom {
        name: shared::custom::ATTACHMENTS.into(),
        value: serde_json::to_value(value).expect("attachments serialise"),
    })
}

/// The event that records the files a tool's result `message_id` (of call `tool_call_id`)
/// returned (none when there are none).
pub fn tool_event(message_id: &str, tool_call_id: &str, files: &[Attachment]) -> Option<EventBody> {
    if files.is_empty() {
        return None;
    }
    let value = MessageAttachments {
        message_id: message_id.to_string(),
        attachments: files.to_vec(),
        tool_call_id: Some(tool_call_id.to_string()),
    };
    Some(EventBody::Custom {
        name: shared::custom::ATTACHMENTS.into(),
        value: serde_json::to_value(value).expect("attachments serialise"),
    })
}

/// What a recorded `tandem.attachments` value says, if it is one.
pub fn from_event(value: &Value) -> Option<MessageAttachments> {
    serde_json::from_value(value.clone()).ok()
}

/// An id as an error message quotes it (it is the caller's text).
fn short(id: &str) -> String {
    id.chars().take(80).collect()
}

/// Reads and prepares the attachments of one run's model calls, each once per run (and
/// again only if the model called takes something else).
#[derive(Default)]
pub struct Loader {
    accepts: Option<Accepts>,
    prepared: HashMap<String, Arc<Content>>,
}

impl Loader {
    /// Prepares for a model that takes what `accepts` says from now on.
    pub fn accepting(&mut self, accepts: Accepts) {
        if self.accepts.as_ref() != Some(&accepts) {
            self.accepts = Some(accepts);
            self.prepared.clear();
        }
    }

    /// Fills in what the model gets of each of `attachments` (a conversation's, message by
    /// message), reading each from `store` the first time (a store that lost one gives a
    /// note).
    pub async fn fill<'a, S: Store>(
        &mut self,
        store: &S,
        attachments: impl IntoIterator<Item = &'a mut Attached>,
    ) -> Result<(), StoreError> {
        for attached in attachments {
            let id = &attached.attachment.id;
            let content = match self.prepared.get(id) {
                Some(content) => content.clone(),
                None => {
                    let content = Arc::new(self.load(store, &attached.attachment).await?);
                    self.prepared.insert(id.clone(), content.clone());
                    content
                }
            };
            attached.content = Some(content);
        }
        Ok(())
    }

    async fn load<S: Store>(
        &self,
        store: &S,
        attachment: &Attachment,
    ) -> Result<Content, StoreError> {
        let Some(row) = store.attachment(&attachment.id).await? else {
            return Ok(Content::gone(attachment));
        };
        let mut bytes = Vec::with_capacity(row.bytes as usize);
        let mut next = 0;
        while (bytes.len() as u64) < row.bytes {
            let chunks = store.blob_chunks(&row.blob, next, 16).await?;
            if chunks.is_empty() {
                break;
            }
            next += chunks.len() as u32;
            chunks
                .iter()
                .for_each(|chunk| bytes.extend_from_slice(chunk));
        }
        let attachment = attachment.clone();
        let accepts = self.accepts.clone().unwrap_or(Accepts::NOTHING);
        let prepared =
            tokio::task::spawn_blocking(move || content::prepare(&attachment, &bytes, &accepts));
        Ok(prepared
            .await
            .unwrap_or_else(|_| Content::Note("[an attachment could not be read]".into())))
    }
}
