//! OpenTelemetry traces: every run as spans named and attributed by the GenAI semantic
//! conventions (1.42.0, the `opentelemetry-semantic-conventions` crate's), exported over
//! OTLP, and HTTP requests as server spans.
//!
//! Spans are made from the session's log, not from timers in the code: a run's spans go
//! out when the run ends (paused, finished, stopped or failed), read from its committed
//! events with the times they recorded ([`shared::timeline`]), so a wait for a person
//! spans the days it took and survives restarts, and `tandem traces export` rebuilds the
//! same spans (the same ids, [`ids`]) for sessions from before tracing was on. Nothing is
//! done on the token path: a run's end hands its id to a task ([`live`]) that reads the
//! log and queues the spans to the SDK's batch processor, whose own thread exports them.
//! Each app has its own processor (tests run several apps in one process), so spans are
//! built as the SDK's `SpanData` and handed to it directly, not through a global tracer.
//!
//! It must not decide anything about a run, and it never blocks one: when the queue is
//! full a run's spans are dropped and counted.

pub mod cli;
mod context;
mod http;
mod ids;
mod live;
mod spans;

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::InstrumentationScope;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::trace::{BatchSpanProcessor, SpanData, SpanProcessor};
use opentelemetry_sdk::Resource;

pub use context::{parse_traceparent, request_parent, traceparent, with_parent};
pub use http::request_span;
pub use live::spawn as spawn_live;
pub use spans::{SpanSource, Spans};

use crate::config::{OtlpProtocol, TraceArgs};
use crate::scrub::Scrubber;

/// The longest one export may take before it is given up.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// A setting that keeps traces from starting.
#[derive(Debug, thiserror::Error)]
pub enum TraceSetupError {
    #[error("OTEL_EXPORTER_OTLP_HEADERS (--otel-headers): {0}")]
    Headers(String),
    #[error("the OTLP exporter for {endpoint}: {message}")]
    Exporter { endpoint: String, message: String },
}

/// Where spans go: nowhere (off) or an OTLP exporter. Cheap to clone.
#[derive(Clone, Default)]
pub struct Traces(Option<Arc<Exporting>>);

struct Exporting {
    processor: Processor,
    /// How this app makes spans (its scope, and its scrubber when they carry contents).
    spans: Spans,
    /// Where live spans come from: runs' ends, read from the log by [`live`].
    live: live::Queue,
}

/// The batch processor, dropped on a thread of its own: its HTTP client blocks when
/// dropped, which no runtime's thread may do.
struct Processor(Option<BatchSpanProcessor>);

impl Processor {
    fn get(&self) -> &BatchSpanProcessor {
        self.0
            .as_ref()
            .expect("the processor is there until dropped")
    }
}

impl Drop for Processor {
    fn drop(&mut self) {
        if let Some(processor) = self.0.take() {
            let _ = std::thread::Builder::new()
                .name("trace-exporter-drop".into())
                .spawn(move || drop(processor));
        }
    }
}

impl std::fmt::Debug for Traces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Traces({})", if self.is_on() { "on" } else { "off" })
    }
}

impl Traces {
    /// No traces.
    pub fn off() -> Self {
        Self(None)
    }

    /// Traces as configured: off without an endpoint. Must run inside the runtime (the
    /// gRPC exporter's connection lives on it).
    pub fn configured(
        args: &TraceArgs,
        secrets: Vec<crate::domain::Secret>,
    ) -> Result<Self, TraceSetupError> {
        let Some(endpoint) = args.endpoint() else {
            return Ok(Self::off());
        };
        let headers = args.headers().map_err(TraceSetupError::Headers)?;
        let exporter = exporter(args.otel_protocol, &endpoint, headers).map_err(|message| {
            TraceSetupError::Exporter {
                endpoint: crate::domain::origin(&endpoint),
                message,
            }
        })?;
        let config = opentelemetry_sdk::trace::BatchConfigBuilder::default()
            .with_scheduled_delay(Duration::from_millis(args.otel_export_delay_ms))
            .build();
        let mut processor = BatchSpanProcessor::builder(exporter)
            .with_batch_config(config)
            .build();
        processor.set_resource(&resource(&args.otel_service_name));
        tracing::info!(endpoint = crate::domain::origin(&endpoint), protocol = ?args.otel_protocol, "exporting traces over OTLP");
        Ok(Self(Some(Arc::new(Exporting {
            processor: Processor(Some(processor)),
            spans: Spans::new(
                scope(),
                args.otel_capture_content.then(|| Scrubber::new(secrets)),
            ),
            live: live::Queue::default(),
        }))))
    }

    /// Whether spans are exported.
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// The spans of runs, as this app makes them (content included if configured).
    pub fn spans(&self) -> Option<&Spans> {
        self.0.as_ref().map(|exporting| &exporting.spans)
    }

    /// Queues finished spans for export (never waits).
    pub fn export(&self, spans: Vec<SpanData>) {
        if let Some(exporting) = &self.0 {
            for span in spans {
                exporting.processor.get().on_end(span);
            }
        }
    }

    /// Says a run ended: its spans go out once the log is read (never waits).
    pub fn run_ended(&self, session: crate::domain::SessionId, run_id: &str) {
        if let Some(exporting) = &self.0 {
            exporting.live.push(session, run_id);
        }
    }

    /// Exports every span still held, then stops the exporter (a clean stop's last
    /// step); an error says why the last export failed.
    pub async fn shutdown(&self) -> Result<(), String> {
        let Some(exporting) = self.0.clone() else {
            return Ok(());
        };
        exporting.live.close();
        let flushed =
            tokio::task::spawn_blocking(move || exporting.processor.get().shutdown()).await;
        match flushed {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(error.to_string()),
            Err(error) => Err(error.to_string()),
        }
    }

    fn live(&self) -> Option<&live::Queue> {
        self.0.as_ref().map(|exporting| &exporting.live)
    }
}

/// The instrumentation scope of Tandem's spans, with the conventions' schema.
fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("tandem")
        .with_version(env!("CARGO_PKG_VERSION"))
        .with_schema_url(opentelemetry_semantic_conventions::SCHEMA_URL)
        .build()
}

/// `service.name` and the rest of `OTEL_RESOURCE_ATTRIBUTES`.
fn resource(service_name: &str) -> Resource {
    Resource::builder()
        .with_service_name(service_name.to_string())
        .with_attribute(opentelemetry::KeyValue::new(
            opentelemetry_semantic_conventions::resource::SERVICE_VERSION,
            env!("CARGO_PKG_VERSION"),
        ))
        .build()
}

/// The OTLP exporter of `protocol` to `endpoint`.
fn exporter(
    protocol: OtlpProtocol,
    endpoint: &str,
    headers: Vec<(String, String)>,
) -> Result<opentelemetry_otlp::SpanExporter, String> {
    crate::agent::engines::http::install_crypto_provider();
    let builder = opentelemetry_otlp::SpanExporter::builder();
    let built = match protocol {
        OtlpProtocol::Grpc => {
            let mut map = ::http::HeaderMap::new();
            for (key, value) in headers {
                let name = ::http::HeaderName::from_bytes(key.to_ascii_lowercase().as_bytes())
                    .map_err(|_| format!("`{key}` is not a header name"))?;
                let value = ::http::HeaderValue::from_str(&value)
                    .map_err(|_| format!("the value of `{key}` is not a header value"))?;
                map.insert(name, value);
            }
            let metadata =
                opentelemetry_otlp::tonic_types::metadata::MetadataMap::from_headers(map);
            builder
                .with_tonic()
                .with_endpoint(endpoint)
                .with_timeout(EXPORT_TIMEOUT)
                .with_metadata(metadata)
                .build()
        }
        OtlpProtocol::HttpProtobuf | OtlpProtocol::HttpJson => builder
            .with_http()
            .with_protocol(match protocol {
                OtlpProtocol::HttpJson => Protocol::HttpJson,
                _ => Protocol::HttpBinary,
            })
            .with_endpoint(endpoint)
            .with_timeout(EXPORT_TIMEOUT)
            .with_headers(headers.into_iter().collect())
            .build(),
    };
    built.map_err(|error| error.to_string())
}
