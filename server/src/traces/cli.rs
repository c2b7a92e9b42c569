//! `tandem traces export --session ID [--endpoint URL | --out FILE]`: a past session's
//! spans, rebuilt from its log with the times it recorded (the same spans, with the same
//! ids, as live tracing sends), for sessions from before tracing was on.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use shared::timeline::Timeline;

use super::{resource, scope, SpanSource, Spans};
use crate::config::{TraceArgs, TracesCommand};
use crate::domain::SessionId;
use crate::store::Store;

/// A `traces` command to run on whichever store the database URL opens.
pub struct TracesOn {
    pub command: TracesCommand,
    pub settings: TraceArgs,
}

impl crate::store::UseStore for TracesOn {
    type Output = anyhow::Result<()>;

    async fn with<S: Store>(self, store: std::sync::Arc<S>) -> Self::Output {
        let TracesCommand::Export {
            session,
            endpoint,
            out,
        } = self.command;
        let session = SessionId::parse(&session)
            .map_err(|_| anyhow::anyhow!("`{session}` is not a session id"))?;
        export(&*store, session, endpoint, out, self.settings).await
    }
}

/// Rebuilds `session`'s spans and sends or writes them; says how many on standard error.
pub async fn export<S: Store>(
    store: &S,
    session: SessionId,
    endpoint: Option<String>,
    out: Option<PathBuf>,
    mut settings: TraceArgs,
) -> anyhow::Result<()> {
    if store.session(session).await?.is_none() {
        anyhow::bail!("there is no session {session}");
    }
    let rows = store.events_after(session, 0, u32::MAX).await?;
    let content = settings.otel_capture_content;
    let mut timeline = Timeline::new(content);
    for row in &rows {
        if let Ok(event) = serde_json::from_str::<shared::Event>(&row.json) {
            timeline.observe(row.seq, &event);
        }
    }
    let runs = timeline.into_runs();
    let id = session.to_string();
    let scrubber = content.then(|| crate::scrub::Scrubber::new(Vec::new()));
    let spans = Spans::new(scope(), scrubber).of_session(SpanSource { session: &id }, &runs);
    let count = spans.len();
    if let Some(path) = out {
        let resource = resource(&settings.otel_service_name);
        let request = ExportTraceServiceRequest {
            resource_spans: group_spans_by_resource_and_scope(
                spans,
                &ResourceAttributesWithSchema::from(&resource),
            ),
        };
        let json = serde_json::to_string(&request)?;
        if path.as_os_str() == "-" {
            writeln!(std::io::stdout(), "{json}")?;
        } else {
            std::fs::write(&path, json + "\n")
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        eprintln!("{count} spans of {} runs written", runs.len());
        return Ok(());
    }
    if let Some(endpoint) = endpoint {
        settings.otel_endpoint = Some(endpoint);
        settings.otel_traces_endpoint = None;
    }
    let traces = super::Traces::configured(&settings, Vec::new())?;
    if !traces.is_on() {
        anyhow::bail!(
            "say where the spans go: --endpoint URL, --out FILE, or OTEL_EXPORTER_OTLP_ENDPOINT"
        );
    }
    traces.export(spans);
    traces.shutdown().await.map_err(|error| {
        let to = settings
            .endpoint()
            .map(|url| crate::domain::origin(&url))
            .unwrap_or_default();
        anyhow::anyhow!("the spans could not be sent to {to}: {error}")
    })?;
    eprintln!("{count} spans of {} runs sent", runs.len());
    Ok(())
}
