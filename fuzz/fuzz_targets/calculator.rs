//! The calculator's expressions: evaluation never panics and never overflows the stack.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(expression) = std::str::from_utf8(data) {
        let _ = tandem::agent::tools::calculator::evaluate(expression);
    }
});
