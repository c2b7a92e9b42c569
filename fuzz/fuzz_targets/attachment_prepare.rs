//! What a model is sent of an attachment, from any bytes under any of the types Tandem
//! reads (images decoded and scaled under limits, PDFs counted, text cut on a character):
//! never panics, and an image it sends fits the limits it was given.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::attachments::Attachment;
use tandem::agent::attached::content::{prepare, Accepts, Content};

const TYPES: [&str; 7] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
    "text/plain",
    "application/octet-stream",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let media_type = TYPES[usize::from(pick) % TYPES.len()];
    let attachment = Attachment {
        id: "att_fuzz".into(),
        name: "fuzz".into(),
        media_type: media_type.into(),
        bytes: bytes.len() as u64,
        sha256: String::new(),
    };
    let accepts = Accepts {
        images: pick & 0x80 == 0,
        max_image_edge: 64,
        max_image_bytes: 64 * 1024,
    };
    if let Content::Image {
        width,
        height,
        base64,
        ..
    } = prepare(&attachment, bytes, &accepts)
    {
        assert!(width.max(height) <= 64, "{width}×{height}");
        assert!(base64.len() / 4 * 3 <= 64 * 1024 + 3);
    }
});
