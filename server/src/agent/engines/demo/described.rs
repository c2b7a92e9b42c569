//! The demo model's answer to a message with attachments: what it received, one line
//! each ("an image, 640×480 PNG", "a PDF, 3 pages"), so the feature shows offline.

use super::turn;
use crate::agent::attached::{content, Attached, Content};
use crate::agent::engines::Turn;

/// A turn that describes `attachments`.
pub(super) fn attachments(attachments: &[Attached]) -> Turn {
    let lines: Vec<String> = attachments
        .iter()
        .map(|attached| format!("- `{}`: {}", attached.attachment.name, what(attached)))
        .collect();
    let count = match attachments.len() {
        1 => "one attachment".to_string(),
        n => format!("{n} attachments"),
    };
    let text = format!(
        "I received {count}:\n\n{}\n\nI am the offline demo model, so this is all I read of \
         them; a real model reads them whole.",
        lines.join("\n")
    );
    turn("Looking at what was attached.", &text, None)
}

/// One attachment, as the demo model describes it.
fn what(attached: &Attached) -> String {
    let attachment = &attached.attachment;
    match attached.content.as_deref() {
        Some(Content::Image {
            width,
            height,
            scaled_from,
            ..
        }) => {
            let (width, height) = scaled_from.unwrap_or((*width, *height));
            let kind = crate::agent::attached::kind(&attachment.media_type);
            format!("an image, {width}×{height} {kind}")
        }
        Some(Content::Pdf { pages, .. }) => match pages {
            Some(pages) => format!("a PDF, {}", crate::agent::attached::page_count(*pages)),
            None => "a PDF".into(),
        },
        Some(Content::Text { text, cut_from }) => {
            let lines = text.lines().count();
            let lines = match lines {
                1 => "1 line".to_string(),
                n => format!("{n} lines"),
            };
            match cut_from {
                Some(whole) => format!(
                    "a text file of {}; I read its first {lines}",
                    content::size(*whole)
                ),
                None => format!("a text file, {lines}"),
            }
        }
        Some(Content::Note(note)) => note.clone(),
        None => format!(
            "a file ({}, {})",
            attachment.media_type,
            content::size(attachment.bytes)
        ),
    }
}
