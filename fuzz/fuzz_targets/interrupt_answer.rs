//! A question the model asks (`request_input` arguments, possibly with a hostile form
//! schema) and a person's answer to it, split at the first NUL byte: neither parsing,
//! bounding, compiling nor validating may panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem::agent::tools::request_input;
use tandem::agent::tools::schema::SchemaLimits;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (question, answer) = text.split_once('\0').unwrap_or((text, "{}"));
    let Ok(request) = request_input::parse(question, &SchemaLimits::default()) else {
        return;
    };
    let interrupt = request_input::interrupt(&request, "call_1", None);
    if let Ok(payload) = serde_json::from_str::<serde_json::Value>(answer) {
        let _ = request_input::check_payload(&interrupt, Some(&payload));
    }
});
