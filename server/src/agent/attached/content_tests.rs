use std::io::Cursor;

use image::{ImageBuffer, ImageFormat, Rgb};
use shared::attachments::Attachment;

use super::*;

const PDF: &[u8] = include_bytes!("../../../../tests/fixtures/attachments/three_pages.pdf");

fn attachment(name: &str, media_type: &str, bytes: usize) -> Attachment {
    Attachment {
        id: "att_1".into(),
        name: name.into(),
        media_type: media_type.into(),
        bytes: bytes as u64,
        sha256: "0".repeat(64),
    }
}

/// A PNG of noise (which compresses badly, as photos do).
fn png(width: u32, height: u32) -> Vec<u8> {
    let image = ImageBuffer::from_fn(width, height, |x, y| {
        let n = (x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503)).rotate_left(x % 13);
        Rgb([n as u8, (n >> 8) as u8, (n >> 16) as u8])
    });
    let mut out = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
        .unwrap();
    out
}

fn takes(edge: u32, bytes: usize) -> Accepts {
    Accepts {
        images: true,
        max_image_edge: edge,
        max_image_bytes: bytes,
    }
}

/// `bytes` named `name` of `media_type`, prepared with room to spare (images up to 2048
/// pixels a side, 1 MiB).
fn prepare_roomy(name: &str, media_type: &str, bytes: &[u8]) -> Content {
    let meta = attachment(name, media_type, bytes.len());
    prepare(&meta, bytes, &takes(2048, 1 << 20))
}

#[test]
fn an_image_within_the_limits_is_sent_byte_for_byte() {
    let bytes = png(64, 48);
    let sent = prepare_roomy("a.png", "image/png", &bytes);
    let Content::Image {
        media_type,
        base64: data,
        width,
        height,
        scaled_from,
    } = sent
    else {
        panic!("{sent:?}")
    };
    assert_eq!(
        (media_type.as_str(), width, height, scaled_from),
        ("image/png", 64, 48, None)
    );
    assert_eq!(data, base64(&bytes));
}

#[test]
fn a_larger_image_is_scaled_to_the_providers_edge_and_bytes() {
    let bytes = png(3000, 1000);
    let meta = attachment("wide.png", "image/png", bytes.len());
    let Content::Image {
        width,
        height,
        scaled_from,
        ..
    } = prepare(&meta, &bytes, &takes(1568, 1 << 24))
    else {
        panic!("not an image")
    };
    assert_eq!(
        (width, height, scaled_from),
        (1568, 523, Some((3000, 1000)))
    );
    // Too many bytes even at the edge: JPEG, smaller again, until it fits.
    let sent = prepare(&meta, &bytes, &takes(1568, 400_000));
    let Content::Image {
        media_type,
        base64: data,
        width,
        ..
    } = sent
    else {
        panic!("not an image")
    };
    assert_eq!(media_type, "image/jpeg");
    assert!(width < 1568);
    assert!(data.len() * 3 / 4 <= 400_000, "{}", data.len());
}

#[test]
fn an_image_too_large_to_read_is_a_note_not_a_decode() {
    let bytes = png(20_000, 1);
    let sent = prepare_roomy("bomb.png", "image/png", &bytes);
    let Content::Note(note) = sent else {
        panic!("{sent:?}")
    };
    assert!(
        note.contains("bomb.png") && note.contains("20000×1"),
        "{note}"
    );
    let broken = prepare(
        &attachment("x.png", "image/png", 4),
        b"\x89PNG",
        &takes(2048, 1 << 20),
    );
    assert!(
        matches!(broken, Content::Note(ref n) if n.contains("could not be read")),
        "{broken:?}"
    );
}

#[test]
fn a_model_without_images_gets_a_note_for_images_and_pdfs() {
    let none = Accepts {
        images: false,
        ..takes(2048, 1 << 20)
    };
    let bytes = png(640, 480);
    let image = prepare(
        &attachment("cat.png", "image/png", bytes.len()),
        &bytes,
        &none,
    );
    assert_eq!(
        image,
        Content::Note("[attached: the image `cat.png`, 640×480 PNG; this model does not take images, so it was not sent]".into())
    );
    let pdf = prepare(
        &attachment("r.pdf", "application/pdf", PDF.len()),
        PDF,
        &none,
    );
    assert!(
        matches!(pdf, Content::Note(ref n) if n.contains("3 pages")),
        "{pdf:?}"
    );
}

#[test]
fn a_pdf_goes_whole_with_its_page_count() {
    let sent = prepare_roomy("r.pdf", "application/pdf", PDF);
    assert_eq!(
        sent,
        Content::Pdf {
            base64: base64(PDF),
            pages: Some(3)
        }
    );
}

#[test]
fn text_is_inlined_with_its_name_and_cut_on_a_character() {
    let meta = attachment("notes.csv", "text/csv", 8);
    let sent = prepare(&meta, b"a,b\n1,2\n", &takes(0, 0));
    assert_eq!(
        sent.as_text(&meta).unwrap(),
        "<attachment id=\"att_1\" name=\"notes.csv\" type=\"text/csv\">\na,b\n1,2\n\n</attachment>"
    );
    let long = "é".repeat(MAX_INLINE_TEXT);
    let sent = prepare(
        &attachment("long.txt", "text/plain", long.len()),
        long.as_bytes(),
        &takes(0, 0),
    );
    let Content::Text { text, cut_from } = &sent else {
        panic!("{sent:?}")
    };
    assert_eq!(
        (text.len(), *cut_from),
        (MAX_INLINE_TEXT, Some(long.len() as u64))
    );
    // Source code uploaded without a type reads as text; other bytes are named only.
    let code = prepare(
        &attachment("main.rs", "application/octet-stream", 12),
        b"fn main() {}",
        &takes(0, 0),
    );
    assert!(matches!(code, Content::Text { .. }), "{code:?}");
    let blob = prepare(
        &attachment("x.bin", "application/octet-stream", 3),
        b"\0\x01\xff",
        &takes(0, 0),
    );
    assert!(
        matches!(blob, Content::Note(ref n) if n.contains("x.bin")),
        "{blob:?}"
    );
    let zip = prepare(
        &attachment("a.zip", "application/zip", 3),
        b"PK\x03",
        &takes(0, 0),
    );
    assert!(matches!(zip, Content::Note(_)), "{zip:?}");
}
