//! What an upload's bytes are: the media type read from the bytes themselves (the `infer`
//! crate's magic numbers), checked against the type the client declared, and how a
//! download may be served and shown.

/// Types a browser may show in place: raster images only. Anything else (SVG and HTML
/// included, which can carry script) is a download.
const INLINE: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Types served as they are stored: the raster images shown in place and PDF, none of
/// which a browser runs as script or renders as a page of the origin. Every other type is
/// served as [`TEXT`] or [`BINARY`] ([`served_type`]).
const SERVED_AS_STORED: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
];
/// What a text file of another type is served as: shown, never run.
const TEXT: &str = "text/plain; charset=utf-8";
/// What any other file is served as: bytes to save.
const BINARY: &str = "application/octet-stream";

/// Declared names of a type that mean the same as the one `infer` reports.
const ALIASES: [(&str, &str); 3] = [
    ("image/jpg", "image/jpeg"),
    ("image/pjpeg", "image/jpeg"),
    ("application/x-pdf", "application/pdf"),
];

/// The media type to store for an upload declared as `declared` whose bytes begin with
/// `head` (at least the first few kilobytes, or all of a smaller file), or why the
/// declaration is refused. Bytes of a known kind must be declared as that kind (or as
/// `application/octet-stream`); bytes of no known kind are taken as declared when that is
/// text (and they read as UTF-8), else as `application/octet-stream`.
pub fn media_type(declared: &str, head: &[u8]) -> Result<String, String> {
    let declared = essence(declared);
    let declared = ALIASES
        .iter()
        .find(|(alias, _)| *alias == declared)
        .map_or(declared.as_str(), |(_, canonical)| *canonical)
        .to_string();
    match infer::get(head).map(|kind| kind.mime_type()) {
        Some(found) if found == declared || declared == "application/octet-stream" => {
            Ok(found.to_string())
        }
        Some(found) => Err(format!(
            "the file was declared as `{declared}` but its bytes are `{found}`"
        )),
        None if declared == "application/octet-stream" => Ok(declared),
        None if is_text(&declared) => match utf8_prefix(head) {
            true => Ok(declared),
            false => Err(format!(
                "the file was declared as `{declared}` but its bytes are not UTF-8 text"
            )),
        },
        None if is_known(&declared) => Err(format!(
            "the file was declared as `{declared}` but its bytes are not that"
        )),
        None => Ok("application/octet-stream".into()),
    }
}

/// Whether a download of this type may be shown in place (`Content-Disposition: inline`).
pub fn shown_inline(media_type: &str) -> bool {
    INLINE.contains(&media_type)
}

/// The `Content-Type` a download of a file stored as `media_type` is served with. A type
/// a browser could run or render as a page of this origin (JavaScript, which a
/// `<script src>` would run whatever the disposition; HTML, SVG, XML, CSS, …) never goes
/// out as itself: a positive list keeps its type, text is served as plain text and the
/// rest as bytes. The stored type stays what the API reports.
pub fn served_type(media_type: &str) -> &str {
    match media_type {
        known if SERVED_AS_STORED.contains(&known) => known,
        text if is_text(text) => TEXT,
        _ => BINARY,
    }
}

/// `type/subtype` in lower case, without parameters.
fn essence(declared: &str) -> String {
    declared
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Whether `media_type` is text (read as UTF-8 when uploaded, inlined for a model).
pub fn is_text(media_type: &str) -> bool {
    media_type.starts_with("text/")
        || media_type.ends_with("+json")
        || media_type.ends_with("+xml")
        || matches!(
            media_type,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-yaml"
                | "application/yaml"
                | "application/toml"
                | "application/sql"
        )
}

/// Whether `infer` knows bytes of this type when it sees them.
fn is_known(media_type: &str) -> bool {
    infer::Infer::new().is_mime_supported(media_type)
}

/// Whether `head` is UTF-8, allowing a character cut at its end.
fn utf8_prefix(head: &[u8]) -> bool {
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(error) => error.error_len().is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";

    #[test]
    fn the_bytes_decide_and_a_declaration_that_disagrees_is_refused() {
        assert_eq!(media_type("image/png", PNG).unwrap(), "image/png");
        assert_eq!(media_type("Image/PNG; x=y", PNG).unwrap(), "image/png");
        assert_eq!(
            media_type("application/octet-stream", PNG).unwrap(),
            "image/png"
        );
        assert!(media_type("image/jpeg", PNG)
            .unwrap_err()
            .contains("image/png"));
        assert!(media_type("text/plain", PNG).is_err());
        assert!(media_type("image/png", b"just text").is_err());
        assert!(media_type("application/pdf", b"just text").is_err());
    }

    #[test]
    fn text_is_taken_as_declared_when_it_reads_as_utf8() {
        assert_eq!(media_type("text/csv", b"a,b\n1,2\n").unwrap(), "text/csv");
        assert_eq!(
            media_type("image/svg+xml", b"<svg/>").unwrap(),
            "image/svg+xml"
        );
        assert_eq!(
            media_type("text/plain", "caf\u{e9}".as_bytes()[..4].as_ref()).unwrap(),
            "text/plain"
        );
        assert!(media_type("text/plain", b"\xff\xfe\x00bad").is_err());
        assert_eq!(
            media_type("application/x-thing", b"\x00\x01\x02").unwrap(),
            "application/octet-stream"
        );
        // Found by the fuzzer: bytes of no known kind stored as octet-stream read back so.
        let unknown = b"\xff\xff\xff\xff\x02%PDF-1.4\n";
        let stored = media_type("application/x-unknown", unknown).unwrap();
        assert_eq!(media_type(&stored, unknown), Ok(stored));
    }

    #[test]
    fn what_a_browser_would_run_is_served_as_text_or_bytes() {
        for runnable in [
            "text/javascript",
            "application/javascript",
            "text/html",
            "application/xhtml+xml",
            "image/svg+xml",
            "text/xml",
            "text/css",
        ] {
            assert_eq!(served_type(runnable), TEXT, "{runnable}");
        }
        assert_eq!(served_type("application/wasm"), BINARY);
        assert_eq!(served_type("application/x-shockwave-flash"), BINARY);
        for kept in SERVED_AS_STORED {
            assert_eq!(served_type(kept), kept);
        }
    }

    #[test]
    fn only_raster_images_are_shown_in_place() {
        assert!(shown_inline("image/png") && shown_inline("image/webp"));
        assert!(!shown_inline("image/svg+xml") && !shown_inline("text/html"));
        assert!(!shown_inline("application/pdf"));
    }
}
