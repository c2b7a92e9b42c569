//! A socket client frame: parsing never panics, and what parses survives a round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::ClientFrame;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(frame) = tandem::ws::client_frames::parse(text) {
        let again: ClientFrame = serde_json::from_str(&serde_json::to_string(&frame).unwrap())
            .expect("a parsed frame serialises to a frame");
        assert_eq!(again, frame);
    }
});
