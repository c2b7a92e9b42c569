//! A session as a zip to keep: its Markdown (whose links point at the files inside), its
//! JSON, and every file its messages carry under `files/`. Written to an unnamed temporary
//! file a chunk at a time (never a whole attachment in memory), then streamed out.

use std::io::{Seek, Write};

use shared::api::SessionSummary;
use shared::attachments::Attachment;
use shared::Event;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::store::{Store, StoreError};

/// Chunks read from the store per query.
const CHUNKS_PER_READ: u32 = 8;

/// Why the archive could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the archive could not be written: {0}")]
    Write(String),
}

impl From<std::io::Error> for ArchiveError {
    fn from(error: std::io::Error) -> Self {
        Self::Write(error.to_string())
    }
}

impl From<zip::result::ZipError> for ArchiveError {
    fn from(error: zip::result::ZipError) -> Self {
        Self::Write(error.to_string())
    }
}

/// The archive of `session` (its events `events`, its files read from `store`), named
/// `name` inside, as an unnamed temporary file positioned at its start.
pub async fn archive<S: Store>(
    store: &S,
    session: &SessionSummary,
    events: &[Event],
    name: &str,
) -> Result<std::fs::File, ArchiveError> {
    let files = super::attachments(events);
    let paths: Vec<(String, String)> = files
        .iter()
        .enumerate()
        .map(|(n, file)| {
            (
                file.id.clone(),
                format!("files/{}-{}", n + 1, safe(&file.name)),
            )
        })
        .collect();
    let path_of = |attachment: &Attachment| {
        let found = paths.iter().find(|(id, _)| *id == attachment.id);
        found.map_or_else(String::new, |(_, path)| path.clone())
    };
    let mut zip = ZipWriter::new(tempfile::tempfile()?);
    let text = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    zip.start_file(format!("{name}.md"), text)?;
    zip.write_all(super::markdown(session, events, path_of).as_bytes())?;
    zip.start_file(format!("{name}.json"), text)?;
    zip.write_all(super::json(session, events).to_string().as_bytes())?;
    // Files are mostly compressed already (images, PDFs): stored as they are.
    let stored = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .large_file(false);
    for (file, (_, path)) in files.iter().zip(&paths) {
        zip.start_file(path.as_str(), stored)?;
        copy_file(store, &file.id, &mut zip).await?;
    }
    let mut out = zip.finish()?;
    out.rewind()?;
    Ok(out)
}

/// Writes attachment `id`'s bytes into `out` a few chunks at a time (nothing when it is no
/// longer stored).
async fn copy_file<S: Store, W: Write>(
    store: &S,
    id: &str,
    out: &mut W,
) -> Result<(), ArchiveError> {
    let Some(row) = store.attachment(id).await? else {
        return Ok(());
    };
    let mut next = 0;
    loop {
        let chunks = store.blob_chunks(&row.blob, next, CHUNKS_PER_READ).await?;
        if chunks.is_empty() {
            return Ok(());
        }
        next += chunks.len() as u32;
        for chunk in &chunks {
            out.write_all(chunk)?;
        }
    }
}

/// A file name safe inside an archive: one line a person reads (`shared::text::one_line`),
/// no folders.
fn safe(name: &str) -> String {
    let clean: String = shared::text::one_line(name)
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    match clean.trim_matches('.').trim() {
        "" => "file".into(),
        clean => clean.to_string(),
    }
}
