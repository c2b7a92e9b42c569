//! Trace settings: whether and where spans go over OTLP, and whether they carry message
//! contents. The standard `OTEL_*` variables are read as the OpenTelemetry specification
//! names them; Tandem's own flags say the same on the command line.

use clap::{Args, ValueEnum};

/// The OTLP transport (`OTEL_EXPORTER_OTLP_PROTOCOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OtlpProtocol {
    /// Protobuf over HTTP (`/v1/traces`), the specification's default.
    #[value(name = "http/protobuf")]
    HttpProtobuf,
    /// JSON over HTTP (`/v1/traces`).
    #[value(name = "http/json")]
    HttpJson,
    /// gRPC.
    #[value(name = "grpc")]
    Grpc,
}

/// Traces (off unless an endpoint is set).
#[derive(Debug, Clone, Args)]
pub struct TraceArgs {
    /// Where spans are sent over OTLP: a collector's base URL (`http://localhost:4318`
    /// for HTTP, `http://localhost:4317` for gRPC); HTTP adds `/v1/traces`. Tracing is
    /// off unless this or `--otel-traces-endpoint` is set.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    pub otel_endpoint: Option<String>,
    /// The full URL spans are sent to, used as it is (wins over `--otel-endpoint`).
    #[arg(long, env = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")]
    pub otel_traces_endpoint: Option<String>,
    /// `http/protobuf`, `http/json` or `grpc`.
    #[arg(
        long,
        env = "OTEL_EXPORTER_OTLP_PROTOCOL",
        value_enum,
        default_value = "http/protobuf"
    )]
    pub otel_protocol: OtlpProtocol,
    /// Headers sent with every export, `key=value` pairs separated by commas (an API key
    /// of a hosted backend); values may be percent-encoded.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_HEADERS", hide_env_values = true)]
    pub otel_headers: Option<String>,
    /// The `service.name` of the spans.
    #[arg(long, env = "OTEL_SERVICE_NAME", default_value = "tandem")]
    pub otel_service_name: String,
    /// How long finished spans wait to be sent together, in ms (the batch processor's
    /// schedule; a clean stop sends what waits at once).
    #[arg(long, env = "OTEL_BSP_SCHEDULE_DELAY", default_value_t = 5_000,
          value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub otel_export_delay_ms: u64,
    /// Whether spans carry message contents: the person's message, the model's answers,
    /// tool arguments and results (the GenAI conventions' opt-in), scrubbed of
    /// credentials like the logs. Off by default.
    #[arg(long, env = "TANDEM_OTEL_CAPTURE_CONTENT", default_value_t = false,
          action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub otel_capture_content: bool,
}

impl TraceArgs {
    /// Where spans go, if anywhere: the traces endpoint as it is, or the base endpoint
    /// (with `/v1/traces` for HTTP). `OTEL_SDK_DISABLED=true` turns it off.
    pub fn endpoint(&self) -> Option<String> {
        if std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true")) {
            return None;
        }
        let nonempty = |url: &Option<String>| url.clone().filter(|u| !u.trim().is_empty());
        if let Some(url) = nonempty(&self.otel_traces_endpoint) {
            return Some(url);
        }
        let base = nonempty(&self.otel_endpoint)?;
        Some(match self.otel_protocol {
            OtlpProtocol::Grpc => base,
            _ => format!("{}/v1/traces", base.trim_end_matches('/')),
        })
    }

    /// The export headers, decoded; an error names the pair that is not `key=value`.
    pub fn headers(&self) -> Result<Vec<(String, String)>, String> {
        let Some(text) = &self.otel_headers else {
            return Ok(Vec::new());
        };
        text.split(',')
            .filter(|pair| !pair.trim().is_empty())
            .map(|pair| {
                let (key, value) = pair
                    .split_once('=')
                    .ok_or_else(|| format!("`{}` is not key=value", pair.trim()))?;
                // Values may be percent-encoded, as the specification allows.
                let value = percent_encoding::percent_decode_str(value.trim());
                Ok((
                    key.trim().to_string(),
                    value.decode_utf8_lossy().into_owned(),
                ))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(endpoint: Option<&str>, traces: Option<&str>, protocol: OtlpProtocol) -> TraceArgs {
        TraceArgs {
            otel_endpoint: endpoint.map(String::from),
            otel_traces_endpoint: traces.map(String::from),
            otel_protocol: protocol,
            otel_headers: Some("api-key=a%3Db, x-team = red ,".into()),
            otel_service_name: "tandem".into(),
            otel_export_delay_ms: 5_000,
            otel_capture_content: false,
        }
    }

    #[test]
    fn the_endpoint_follows_the_specification() {
        let http = OtlpProtocol::HttpProtobuf;
        assert_eq!(args(None, None, http).endpoint(), None, "off by default");
        assert_eq!(
            args(Some("http://c:4318/"), None, http)
                .endpoint()
                .as_deref(),
            Some("http://c:4318/v1/traces")
        );
        assert_eq!(
            args(Some("http://c:4317"), None, OtlpProtocol::Grpc)
                .endpoint()
                .as_deref(),
            Some("http://c:4317")
        );
        assert_eq!(
            args(Some("http://c:4318"), Some("http://t/x"), http)
                .endpoint()
                .as_deref(),
            Some("http://t/x")
        );
        assert_eq!(
            args(None, None, http).headers().unwrap(),
            [
                ("api-key".into(), "a=b".into()),
                ("x-team".into(), "red".into())
            ]
        );
        let mut bad = args(None, None, http);
        bad.otel_headers = Some("novalue".into());
        assert!(bad.headers().unwrap_err().contains("novalue"));
    }
}
