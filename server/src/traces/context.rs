//! The W3C trace context a request came with, for the runs it starts.
//!
//! The HTTP layer ([`super::http`]) reads `traceparent` and, when tracing is on, makes the
//! request's server span its child; the context of that span (or the caller's, when
//! tracing is off) is held for the request's task, and a socket's loop keeps the one its
//! handshake came with. A run started there records it (`CUSTOM tandem.trace_context`)
//! with its `RUN_STARTED`, so its spans join the caller's trace.

use std::future::Future;

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{SpanContext, TraceContextExt};
use opentelemetry_sdk::propagation::TraceContextPropagator;

tokio::task_local! {
    static PARENT: Option<SpanContext>;
}

/// Reads a `traceparent` header (and `tracestate`, kept) as the W3C Trace Context says,
/// with the SDK's propagator; `None` when it is missing or invalid.
pub fn parse_traceparent(header: &str) -> Option<SpanContext> {
    // The propagator takes shorter ids as numbers; the header has them in full.
    let mut parts = header.trim().split('-').skip(1);
    if parts.next()?.len() != 32 || parts.next()?.len() != 16 {
        return None;
    }
    let carrier = HashMap::from([("traceparent".to_string(), header.to_string())]);
    let context = TraceContextPropagator::new().extract(&carrier);
    let span = context.span().span_context().clone();
    span.is_valid().then_some(span)
}

/// A span context as a `traceparent` header value.
pub fn traceparent(context: &SpanContext) -> String {
    format!(
        "00-{}-{}-{:02x}",
        context.trace_id(),
        context.span_id(),
        context.trace_flags().to_u8()
    )
}

/// Runs `work` with `parent` as the trace context of the runs it starts.
pub async fn with_parent<F: Future>(parent: Option<SpanContext>, work: F) -> F::Output {
    PARENT.scope(parent, work).await
}

/// The trace context of the request (or socket) this task serves, if it had one.
pub fn request_parent() -> Option<SpanContext> {
    PARENT.try_with(Clone::clone).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_headers_are_read_as_w3c_says() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let context = parse_traceparent(good).expect("valid");
        assert!(context.is_sampled() && context.is_remote());
        assert_eq!(traceparent(&context), good);
        let unsampled =
            parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
        assert!(!unsampled.expect("valid").is_sampled());
        for bad in [
            "",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert!(parse_traceparent(bad).is_none(), "{bad}");
        }
    }

    #[tokio::test]
    async fn the_context_holds_for_the_task_that_serves_the_request() {
        assert!(request_parent().is_none());
        let context = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        let seen = with_parent(context.clone(), async { request_parent() }).await;
        assert_eq!(seen, context);
    }
}
