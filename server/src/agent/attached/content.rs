//! What a model gets of one attachment, prepared from its bytes for what the model
//! takes ([`Accepts`]): an image within the provider's limits, a PDF, text with its name,
//! or a short note saying what was attached and why the model does not get it.

use base64::Engine as _;
use shared::attachments::Attachment;

use super::{pdf, raster};

/// Bytes of a text attachment inlined into the conversation; the rest is left out with
/// a note (the `read_attachment` tool reads further).
pub const MAX_INLINE_TEXT: usize = 100 * 1024;

/// What a model takes of attachments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepts {
    /// Images and PDFs (both providers read PDFs through their vision models); a model
    /// without gets a note.
    pub images: bool,
    /// The longest edge an image is sent with; larger ones are scaled down.
    pub max_image_edge: u32,
    /// The most bytes an image is sent with; larger ones are scaled down until they fit.
    pub max_image_bytes: usize,
}

impl Accepts {
    /// Text and notes only (a loader not yet told what its model takes).
    pub const NOTHING: Self = Self {
        images: false,
        max_image_edge: 0,
        max_image_bytes: 0,
    };
}

/// What the model gets of an attachment.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// A raster image, base64 of `media_type` bytes.
    Image {
        media_type: String,
        base64: String,
        /// Its size as sent.
        width: u32,
        height: u32,
        /// Its size as uploaded, when it was scaled down.
        scaled_from: Option<(u32, u32)>,
    },
    /// A PDF, base64 of its bytes.
    Pdf {
        base64: String,
        pages: Option<usize>,
    },
    /// A text file's contents (at most [`MAX_INLINE_TEXT`] bytes).
    Text {
        text: String,
        /// Its whole size, when only the first [`MAX_INLINE_TEXT`] bytes are here.
        cut_from: Option<u64>,
    },
    /// Instead of the bytes: what was attached and why the model does not get it.
    Note(String),
}

impl Content {
    /// The note for an attachment whose bytes are gone.
    pub fn gone(attachment: &Attachment) -> Self {
        Self::Note(format!(
            "[attached: `{}`, which is no longer stored]",
            attachment.name
        ))
    }

    /// The text a provider sends for text and notes: the file's name and type, then its
    /// contents; `None` for images and PDFs, which travel as their own parts.
    pub fn as_text(&self, attachment: &Attachment) -> Option<String> {
        match self {
            Content::Text { text, cut_from } => {
                let cut = cut_from.map_or(String::new(), |whole| {
                    format!(
                        "\n[only the first {} of {} are shown; the read_attachment tool reads on]",
                        size(MAX_INLINE_TEXT as u64),
                        size(whole)
                    )
                });
                Some(format!(
                    "<attachment id=\"{}\" name=\"{}\" type=\"{}\">\n{text}{cut}\n</attachment>",
                    attachment.id, attachment.name, attachment.media_type
                ))
            }
            Content::Note(note) => Some(note.clone()),
            Content::Image { .. } | Content::Pdf { .. } => None,
        }
    }
}

/// Prepares `bytes` of `attachment` for a model that takes what `accepts` says.
pub fn prepare(attachment: &Attachment, bytes: &[u8], accepts: &Accepts) -> Content {
    let media_type = attachment.media_type.as_str();
    let name = &attachment.name;
    if raster::is_raster(media_type) {
        let image = raster::fit(bytes, media_type, accepts);
        return match (image, accepts.images) {
            (Ok(image), true) => Content::Image {
                media_type: image.media_type,
                base64: base64(&image.bytes),
                width: image.width,
                height: image.height,
                scaled_from: image.scaled_from,
            },
            (Ok(image), false) => Content::Note(format!(
                "[attached: the image `{name}`, {}×{} {}; this model does not take images, \
                 so it was not sent]",
                image.original().0,
                image.original().1,
                raster::kind(media_type),
            )),
            (Err(why), _) => Content::Note(format!("[attached: the image `{name}`; {why}]")),
        };
    }
    if media_type == "application/pdf" {
        let pages = pdf::pages(bytes);
        if !accepts.images {
            return Content::Note(format!(
                "[attached: the PDF `{name}`{}; this model does not take documents, so it was \
                 not sent]",
                pages.map_or(String::new(), |p| format!(", {}", pdf::page_count(p)))
            ));
        }
        return Content::Pdf {
            base64: base64(bytes),
            pages,
        };
    }
    if let Some(text) = readable_text(media_type, bytes) {
        let cut_from = (bytes.len() > MAX_INLINE_TEXT).then_some(bytes.len() as u64);
        return Content::Text { text, cut_from };
    }
    Content::Note(format!(
        "[attached: `{name}` ({media_type}, {}); its contents cannot be shown to the model]",
        size(attachment.bytes)
    ))
}

/// The first [`MAX_INLINE_TEXT`] bytes as text, if the attachment is text: a text media
/// type, or bytes of no known kind that read as UTF-8 (source files often come without a
/// type).
fn readable_text(media_type: &str, bytes: &[u8]) -> Option<String> {
    let known_text = crate::attachments::media::is_text(media_type);
    if !known_text && media_type != "application/octet-stream" {
        return None;
    }
    let mut end = bytes.len().min(MAX_INLINE_TEXT);
    while end > 0 && end < bytes.len() && (bytes[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    let head = &bytes[..end];
    match std::str::from_utf8(head) {
        Ok(text) if known_text || !text.contains('\0') => Some(text.to_string()),
        _ if known_text => Some(String::from_utf8_lossy(head).into_owned()),
        _ => None,
    }
}

/// An estimate of an attachment's size in a model's context, in tokens: what providers
/// charge for a large image (about 1,600), for a PDF page (1,500 to 3,000; pages are
/// guessed at one per 50 KiB), for text (bytes / 4, as the conversation's own estimate).
pub fn estimated_tokens(attachment: &Attachment) -> usize {
    let bytes = attachment.bytes as usize;
    match attachment.media_type.as_str() {
        kind if raster::is_raster(kind) => 1_600,
        "application/pdf" => 2_000 * bytes.div_ceil(50 * 1024).max(1),
        kind if crate::attachments::media::is_text(kind) || kind == "application/octet-stream" => {
            bytes.min(MAX_INLINE_TEXT) / 4 + 20
        }
        _ => 40,
    }
}

/// Bytes as people read them (`12 KB`, `3.4 MB`).
pub fn size(bytes: u64) -> String {
    shared::attachments::human_size(bytes)
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
#[path = "content_tests.rs"]
mod tests;
