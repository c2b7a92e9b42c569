//! An attachment's media type from its declared type and its bytes: never panics, and a
//! type it decides on is accepted again when declared (what is stored reads back).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem::attachments::media::media_type;

const DECLARED: [&str; 8] = [
    "image/png",
    "image/jpeg",
    "application/pdf",
    "text/plain; charset=utf-8",
    "application/json",
    "image/svg+xml",
    "application/octet-stream",
    "application/x-unknown",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let declared = DECLARED[usize::from(pick) % DECLARED.len()];
    if let Ok(stored) = media_type(declared, bytes) {
        assert_eq!(media_type(&stored, bytes), Ok(stored.clone()), "{declared}");
    }
});
