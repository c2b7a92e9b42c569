//! Trace and span ids named by what they stand for, so that the spans a run gets live and
//! the spans `tandem traces export` rebuilds from the log later are the same spans.

use opentelemetry::trace::{SpanId, TraceId};
use sha2::{Digest, Sha256};

/// The first bytes of SHA-256 over the parts, never all zero (an invalid id).
fn digest<const N: usize>(parts: &[&str]) -> [u8; N] {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    let full = hash.finalize();
    let mut id = [0u8; N];
    id.copy_from_slice(&full[..N]);
    if id.iter().all(|byte| *byte == 0) {
        id[N - 1] = 1;
    }
    id
}

/// The trace of a run that no caller's trace took in.
pub fn trace_of_run(session: &str, run: &str) -> TraceId {
    TraceId::from_bytes(digest(&["trace", session, run]))
}

/// The span of a run (`invoke_agent`).
pub fn run_span(session: &str, run: &str) -> SpanId {
    SpanId::from_bytes(digest(&["run", session, run]))
}

/// The span of one item of a run, named by a key unique in its session (the seq that
/// began it, or the interrupt it waits on).
pub fn item_span(session: &str, run: &str, key: &str) -> SpanId {
    SpanId::from_bytes(digest(&["item", session, run, key]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        assert_eq!(trace_of_run("s", "r"), trace_of_run("s", "r"));
        assert_ne!(trace_of_run("s", "r"), trace_of_run("s", "r2"));
        assert_ne!(run_span("s", "r"), item_span("s", "r", "1"));
        assert_ne!(item_span("s", "r", "1"), item_span("s", "r", "2"));
        assert_ne!(trace_of_run("s", "r"), TraceId::INVALID);
    }
}
