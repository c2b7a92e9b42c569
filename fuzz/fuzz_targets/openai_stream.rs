//! A streamed Chat Completions response body, cut into pieces of a fuzzed size and read by the real
//! SSE parser and decoder: never a panic, and an error ends what the call yields.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem::agent::engines::{decode_body, StreamFormat};

fuzz_target!(|body: &[u8]| {
    // The piece size comes from the bytes, so the recorded fixtures work as seeds as-is.
    let chunk = body.iter().fold(7usize, |h, b| {
        h.wrapping_mul(31).wrapping_add(usize::from(*b))
    });
    let events = decode_body(StreamFormat::OpenAi, body, chunk % 64 + 1);
    let first_error = events.iter().position(Result::is_err);
    assert!(
        first_error.is_none_or(|at| at == events.len() - 1),
        "nothing after an error"
    );
});
