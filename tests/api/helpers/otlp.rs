//! Local OTLP trace receivers: over HTTP (`POST /v1/traces`, protobuf or JSON as the
//! specification encodes them), holding the spans it was sent for the test to read; and
//! over gRPC (gRPC's own Python server, `tests/support/otlp_grpc_receiver.py`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message;
use serde_json::{json, Value};
use tokio::sync::Notify;

/// One span as received, its ids in hex.
#[derive(Debug, Clone)]
pub struct Span {
    pub service: String,
    pub scope: String,
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: String,
    pub name: String,
    /// 1 internal, 2 server, 3 client.
    pub kind: i32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attributes: serde_json::Map<String, Value>,
    /// 0 unset, 1 ok, 2 error.
    pub status: i32,
    /// Linked spans: (trace id, span id).
    pub links: Vec<(String, String)>,
}

impl Span {
    pub fn attribute(&self, key: &str) -> Option<&Value> {
        self.attributes.get(key)
    }

    pub fn text(&self, key: &str) -> &str {
        self.attributes
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

#[derive(Default)]
struct Received {
    spans: Mutex<Vec<Span>>,
    /// `content-type` and `x-team` header of each request.
    requests: Mutex<Vec<(String, String)>>,
    arrived: Notify,
}

/// The receiver, listening until dropped.
pub struct Receiver {
    /// Its base URL (`http://127.0.0.1:PORT`), for `--otel-endpoint`.
    pub base: String,
    received: Arc<Received>,
    handle: actix_web::dev::ServerHandle,
}

impl Receiver {
    pub fn start() -> Self {
        let received = Arc::new(Received::default());
        let data = web::Data::from(received.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .app_data(web::PayloadConfig::new(64 << 20))
                .route("/v1/traces", web::post().to(receive))
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .expect("the receiver binds");
        let base = format!("http://{}", server.addrs()[0]);
        let server = server.run();
        let handle = server.handle();
        tokio::spawn(server);
        Self {
            base,
            received,
            handle,
        }
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Span> {
        self.received.spans.lock().unwrap().clone()
    }

    /// The content type and `x-team` header of each export request.
    pub fn requests(&self) -> Vec<(String, String)> {
        self.received.requests.lock().unwrap().clone()
    }

    /// Waits until the spans received satisfy `done`; they, then.
    pub async fn until(&self, what: &str, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let wait = async {
            loop {
                let arrived = self.received.arrived.notified();
                let spans = self.spans();
                if done(&spans) {
                    return spans;
                }
                arrived.await;
            }
        };
        match tokio::time::timeout(Duration::from_secs(30), wait).await {
            Ok(spans) => spans,
            Err(_) => panic!(
                "no {what} within 30 s; received: {:#?}",
                names(&self.spans())
            ),
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

/// The names of spans, for a failure's message.
pub fn names(spans: &[Span]) -> Vec<String> {
    spans.iter().map(|span| span.name.clone()).collect()
}

async fn receive(
    request: HttpRequest,
    body: web::Bytes,
    received: web::Data<Received>,
) -> HttpResponse {
    let content_type = request
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let team = request
        .headers()
        .get("x-team")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let json = content_type.starts_with("application/json");
    let decoded = if json {
        serde_json::from_slice::<ExportTraceServiceRequest>(&body).map_err(|e| e.to_string())
    } else {
        ExportTraceServiceRequest::decode(body.as_ref()).map_err(|e| e.to_string())
    };
    let Ok(export) = decoded else {
        return HttpResponse::BadRequest().body(format!("{decoded:?}"));
    };
    received.requests.lock().unwrap().push((content_type, team));
    received.spans.lock().unwrap().extend(flatten(export));
    received.arrived.notify_waiters();
    if json {
        HttpResponse::Ok()
            .content_type("application/json")
            .body("{}")
    } else {
        HttpResponse::Ok()
            .content_type("application/x-protobuf")
            .body(Vec::<u8>::new())
    }
}

/// The spans of an export request, each with its service and scope.
pub fn flatten(export: ExportTraceServiceRequest) -> Vec<Span> {
    let mut spans = Vec::new();
    for resource in export.resource_spans {
        let resource_attributes = resource
            .resource
            .map(|r| attributes(r.attributes))
            .unwrap_or_default();
        let service = resource_attributes
            .get("service.name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        for scope in resource.scope_spans {
            let scope_name = scope.scope.map(|s| s.name).unwrap_or_default();
            for span in scope.spans {
                spans.push(Span {
                    service: service.clone(),
                    scope: scope_name.clone(),
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    name: span.name,
                    kind: span.kind,
                    start_ns: span.start_time_unix_nano,
                    end_ns: span.end_time_unix_nano,
                    attributes: attributes(span.attributes),
                    status: span.status.map_or(0, |s| s.code),
                    links: span
                        .links
                        .into_iter()
                        .map(|link| (hex(&link.trace_id), hex(&link.span_id)))
                        .collect(),
                });
            }
        }
    }
    spans
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attributes(
    list: Vec<opentelemetry_proto::tonic::common::v1::KeyValue>,
) -> serde_json::Map<String, Value> {
    list.into_iter()
        .map(|kv| {
            (
                kv.key,
                kv.value.and_then(|v| v.value).map_or(Value::Null, any),
            )
        })
        .collect()
}

fn any(value: AnyValue) -> Value {
    match value {
        AnyValue::StringValue(s) => json!(s),
        AnyValue::BoolValue(b) => json!(b),
        AnyValue::IntValue(i) => json!(i),
        AnyValue::DoubleValue(d) => json!(d),
        AnyValue::ArrayValue(a) => Value::Array(
            a.values
                .into_iter()
                .filter_map(|v| v.value)
                .map(any)
                .collect(),
        ),
        other => json!(format!("{other:?}")),
    }
}

/// The gRPC receiver (`tests/support/otlp_grpc_receiver.py`), in the tools' Python; the
/// spans it prints, one JSON object a line.
pub struct GrpcReceiver {
    child: std::process::Child,
    pub port: u16,
    lines: std::sync::mpsc::Receiver<Value>,
}

impl GrpcReceiver {
    pub fn start() -> Self {
        use std::io::BufRead;
        let tools = std::env::var("TANDEM_TOOLS_DIR").unwrap_or_else(|_| {
            format!(
                "{}/.cache/tandem-tools",
                std::env::var("HOME").unwrap_or_default()
            )
        });
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/support/otlp_grpc_receiver.py"
        );
        let mut child = std::process::Command::new(format!("{tools}/venv/bin/python"))
            .arg(script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the tools' Python runs (scripts/setup.sh --test installs it)");
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let first = out.next().expect("it says where it listens").unwrap();
        let port = first
            .trim_start_matches("listening ")
            .parse()
            .expect(&first);
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in out.map_while(Result::ok) {
                if send.send(serde_json::from_str(&line).unwrap()).is_err() {
                    break;
                }
            }
        });
        Self { child, port, lines }
    }

    /// Spans until one named `name` arrives (30 s at most).
    pub fn until(&self, name: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            let Ok(span) = self.lines.recv_timeout(left) else {
                break;
            };
            let found = span["name"] == name;
            seen.push(span);
            if found {
                return seen;
            }
        }
        panic!("no {name} within 30 s: {seen:?}");
    }
}

impl Drop for GrpcReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
