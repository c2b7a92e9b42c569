//! HTTP requests as server spans (`{METHOD} {route}`, the HTTP conventions' attributes),
//! children of the caller's span when a `traceparent` came; the request's task holds the
//! context for the runs it starts ([`super::context`]). With tracing off, only the
//! caller's context is held (a run records it, so an export later joins that trace).

use std::time::SystemTime;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::web;
use opentelemetry::trace::{SpanContext, SpanKind, Status, TraceFlags, TraceState};
use opentelemetry::KeyValue;
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use opentelemetry_semantic_conventions::attribute as semconv;

use super::context::{parse_traceparent, with_parent};
use super::spans::Shape;
use super::Traces;

/// Wraps every request: its server span, and the trace context its runs take.
pub async fn request_span(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let caller = request
        .headers()
        .get("traceparent")
        .and_then(|value| value.to_str().ok())
        .and_then(parse_traceparent);
    // The app's (an `Arc`): it outlives the request, which the call below takes.
    let traces = request.app_data::<web::Data<Traces>>().cloned();
    let Some(traces) = traces.filter(|traces| traces.is_on()) else {
        return with_parent(caller, next.call(request)).await;
    };
    let ids = RandomIdGenerator::default();
    let (trace, flags) = match &caller {
        Some(caller) => (caller.trace_id(), caller.trace_flags()),
        None => (ids.new_trace_id(), TraceFlags::SAMPLED),
    };
    let context = SpanContext::new(
        trace,
        ids.new_span_id(),
        flags,
        false,
        TraceState::default(),
    );
    let method = request.method().to_string();
    let path = request.path().to_string();
    let start = SystemTime::now();
    let result = with_parent(Some(context.clone()), next.call(request)).await;
    if !flags.is_sampled() {
        return result;
    }
    let (status, route) = match &result {
        Ok(response) => (
            response.status().as_u16(),
            response.request().match_pattern(),
        ),
        Err(error) => (error.as_response_error().status_code().as_u16(), None),
    };
    let mut attributes = vec![
        KeyValue::new(semconv::HTTP_REQUEST_METHOD, method.clone()),
        KeyValue::new(semconv::URL_PATH, path),
        KeyValue::new(semconv::HTTP_RESPONSE_STATUS_CODE, i64::from(status)),
    ];
    let name = match &route {
        Some(route) => {
            attributes.push(KeyValue::new(semconv::HTTP_ROUTE, route.clone()));
            format!("{method} {route}")
        }
        None => method,
    };
    let status = if status >= 500 {
        attributes.push(KeyValue::new(semconv::ERROR_TYPE, status.to_string()));
        Status::error(format!("HTTP {status}"))
    } else {
        Status::Unset
    };
    let Some(spans) = traces.spans() else {
        return result;
    };
    let span = spans.finished(Shape {
        context,
        parent: caller.map(|caller| (caller.span_id(), true)),
        kind: SpanKind::Server,
        name: name.into(),
        start,
        end: SystemTime::now(),
        attributes,
        status,
        links: Vec::new(),
    });
    traces.export(vec![span]);
    result
}
