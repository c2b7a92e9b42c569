//! OpenTelemetry traces against a local OTLP receiver: a run with a tool call, a question
//! and its answer as one trace by the GenAI conventions, under the caller's `traceparent`;
//! contents only when asked (scrubbed); the spans held flushed by SIGTERM; `tandem traces
//! export` rebuilding the very same spans from the log.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};
use shared::{EventBody, Outcome};

use crate::helpers::child::Tandem;
use crate::helpers::otlp::{self, GrpcReceiver, Receiver, Span};
use crate::helpers::{fresh_database, start, test_config, write_script, TestApp};

/// The caller's trace context.
const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";
/// Spans wait this long to be sent together (the default five seconds would slow tests).
const QUICK_EXPORT: &[&str] = &["--otel-export-delay-ms", "20"];

fn usage(input: u64, output: u64, finish: &str) -> Value {
    json!({"provider": "openai", "model": "gpt-test-1", "inputTokens": input,
           "outputTokens": output, "cachedInputTokens": 40, "finishReason": finish})
}

/// Adds with the calculator, asks a question, answers after it.
fn script() -> Value {
    json!([
        {"text": "Adding.", "toolCalls": [{"name": "calculator", "arguments": {"expression": "2+3"}}],
         "usage": usage(100, 10, "tool_calls")},
        {"text": "I need to ask.", "toolCalls": [{"name": "request_input",
            "arguments": {"prompt": "Go on?", "kind": "text"}}], "usage": usage(120, 12, "tool_calls")},
        {"text": "Done: 5.", "usage": usage(150, 5, "stop")},
    ])
}

/// Posts a message with the caller's `traceparent`; the run's id.
async fn say_traced(app: &TestApp, session: &str, text: &str) -> String {
    let response = app
        .http
        .post(app.url(&format!("/api/sessions/{session}/messages")))
        .header("traceparent", format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01"))
        .json(&json!({"text": text}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    let body: Value = response.json().await.unwrap();
    body["runId"].as_str().unwrap().to_string()
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|span| span.name == name).collect()
}

fn of_run<'a>(spans: &'a [Span], run: &str) -> Option<&'a Span> {
    spans
        .iter()
        .find(|span| span.name == "invoke_agent tandem" && span.text("tandem.run.id") == run)
}

/// The GenAI spans (not the HTTP requests'), as comparable tuples.
fn shapes(spans: &[Span]) -> BTreeSet<(String, String, String, String, u64, u64)> {
    spans
        .iter()
        .filter(|span| span.attribute("gen_ai.conversation.id").is_some())
        .map(|span| {
            let ids = (
                span.trace_id.clone(),
                span.span_id.clone(),
                span.parent_span_id.clone(),
            );
            (
                span.name.clone(),
                ids.0,
                ids.1,
                ids.2,
                span.start_ns,
                span.end_ns,
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_and_answered_run_is_one_trace_by_the_genai_conventions() {
    let receiver = Receiver::start();
    let (dir, url) = fresh_database();
    let script_file = write_script(dir.path(), script());
    let flags = [&["--otel-endpoint", receiver.base.as_str()], QUICK_EXPORT].concat();
    let app = start(test_config(&url, &script_file, &flags)).await;
    let (session, mut socket) = app.open_session().await;
    let first = say_traced(&app, &session, "add 2 and 3").await;
    let paused = socket.until_run_end().await;
    let Some(EventBody::RunFinished {
        outcome: Some(Outcome::Interrupt { interrupts }),
        ..
    }) = paused.last().map(|(_, event)| &event.body)
    else {
        panic!("the run pauses: {paused:?}")
    };

    let spans = receiver
        .until("the first run's spans", |spans| {
            of_run(spans, &first).is_some()
        })
        .await;
    let run = of_run(&spans, &first).unwrap();
    assert_eq!(
        run.trace_id, CALLER_TRACE,
        "the run joins the caller's trace"
    );
    let request = spans
        .iter()
        .find(|span| span.span_id == run.parent_span_id)
        .expect("the run hangs under its request's server span");
    assert_eq!(request.name, "POST /api/sessions/{id}/messages");
    assert_eq!(request.kind, 2, "a server span");
    assert_eq!(request.parent_span_id, CALLER_SPAN);
    assert_eq!(
        request.attribute("http.response.status_code"),
        Some(&json!(202))
    );
    assert_eq!(run.text("gen_ai.operation.name"), "invoke_agent");
    assert_eq!(run.text("gen_ai.agent.name"), "tandem");
    assert_eq!(run.text("gen_ai.conversation.id"), session);
    assert_eq!(run.text("tandem.run.outcome"), "paused");
    assert_eq!(
        run.attribute("gen_ai.usage.input_tokens"),
        Some(&json!(220))
    );
    assert_eq!(
        (run.service.as_str(), run.scope.as_str()),
        ("tandem", "tandem")
    );
    assert_eq!(run.status, 0, "a paused run is no error");

    let children: Vec<&Span> = spans
        .iter()
        .filter(|span| span.parent_span_id == run.span_id)
        .collect();
    let mut names: Vec<&str> = children.iter().map(|span| span.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "chat gpt-test-1",
            "chat gpt-test-1",
            "execute_tool calculator"
        ],
        "request_input is the wait, not a tool run"
    );
    let chat = children
        .iter()
        .find(|span| span.name.starts_with("chat"))
        .unwrap();
    assert_eq!(chat.kind, 3, "a model call is a client span");
    assert_eq!(chat.text("gen_ai.operation.name"), "chat");
    assert_eq!(chat.text("gen_ai.provider.name"), "openai");
    assert_eq!(chat.text("gen_ai.request.model"), "gpt-test-1");
    assert_eq!(chat.text("gen_ai.response.model"), "gpt-test-1");
    assert_eq!(
        chat.attribute("gen_ai.usage.output_tokens"),
        Some(&json!(10))
    );
    assert_eq!(
        chat.attribute("gen_ai.usage.cache_read.input_tokens"),
        Some(&json!(40))
    );
    assert_eq!(
        chat.attribute("gen_ai.response.finish_reasons"),
        Some(&json!(["tool_calls"]))
    );
    assert!(chat
        .attribute("gen_ai.response.time_to_first_chunk")
        .is_some_and(Value::is_f64));
    let tool = children
        .iter()
        .find(|span| span.name.starts_with("execute_tool"))
        .unwrap();
    assert_eq!(tool.text("gen_ai.tool.name"), "calculator");
    assert_eq!(tool.text("gen_ai.tool.type"), "function");
    assert!(!tool.text("gen_ai.tool.call.id").is_empty());
    assert!(
        chat.end_ns <= tool.start_ns && tool.end_ns <= run.end_ns,
        "{chat:?} {tool:?}"
    );
    for span in children.iter().chain([&run]) {
        for key in [
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
        ] {
            assert!(
                span.attribute(key).is_none(),
                "no contents unless asked: {span:?}"
            );
        }
    }

    let answer = json!({"status": "resolved", "payload": {"text": "yes"}});
    let path = format!("/api/sessions/{session}/interrupts/{}", interrupts[0].id);
    assert_eq!(app.post(&path, answer).await.0, 202);
    let resumed = socket.until_run_end().await;
    let EventBody::RunStarted { run_id: second, .. } = &resumed[0].1.body else {
        panic!("{resumed:?}")
    };
    let spans = receiver
        .until("the wait and the resumed run", |spans| {
            of_run(spans, second).is_some() && !named(spans, "await_human").is_empty()
        })
        .await;
    let wait = named(&spans, "await_human")[0];
    assert_eq!(
        wait.parent_span_id, run.span_id,
        "the wait hangs under the run that paused"
    );
    assert_eq!(wait.trace_id, CALLER_TRACE);
    assert_eq!(wait.text("tandem.interrupt.id"), interrupts[0].id);
    assert_eq!(wait.text("tandem.interrupt.reason"), "input_required");
    assert_eq!(wait.text("tandem.interrupt.answer"), "resolved");
    assert_eq!(wait.text("tandem.resumed_run.id"), second.as_str());
    assert_eq!(wait.start_ns, run.end_ns, "from the pause");
    let resumed_run = of_run(&spans, second).unwrap();
    assert!(
        wait.end_ns <= resumed_run.start_ns + 1_000_000,
        "to the answer"
    );
    assert_eq!(resumed_run.text("tandem.run.outcome"), "succeeded");
    assert_eq!(
        resumed_run.links,
        [(run.trace_id.clone(), run.span_id.clone())],
        "the resumed run links to the run that paused"
    );

    // The conventions' histograms, in Prometheus naming.
    let metrics = app.metrics().await;
    for line in [
        "gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name=\"chat\",gen_ai_provider_name=\"script\",gen_ai_request_model=",
        "gen_ai_client_token_usage_sum{gen_ai_operation_name=\"chat\",gen_ai_provider_name=\"script\",gen_ai_request_model=",
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }

    // The same spans, rebuilt from the log by the command, to a file and to a collector.
    let live = shapes(&spans);
    app.stop().await;
    let file = dir.path().join("spans.json");
    let exported = export_command(&url, &session, &["--out", file.to_str().unwrap()]);
    assert!(exported.contains("spans of 2 runs written"), "{exported}");
    let request: opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).expect("OTLP JSON");
    assert_eq!(
        shapes(&otlp::flatten(request)),
        live,
        "the file holds the live spans"
    );
    let collector = Receiver::start();
    let sent = export_command(&url, &session, &["--endpoint", collector.base.as_str()]);
    assert!(sent.contains("spans of 2 runs sent"), "{sent}");
    let again = collector
        .until("the exported spans", |spans| spans.len() >= live.len())
        .await;
    assert_eq!(shapes(&again), live, "the collector gets the live spans");
}

/// Runs `tandem traces export`; its standard error.
fn export_command(url: &str, session: &str, flags: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args([
            "--database-url",
            url,
            "traces",
            "export",
            "--session",
            session,
        ])
        .args(flags)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .output()
        .expect("tandem runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    stderr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contents_go_out_only_when_asked_scrubbed_and_as_json_with_headers() {
    let receiver = Receiver::start();
    let (dir, url) = fresh_database();
    let key = "sk-live-abcdefghijklmnop1234";
    let turns = json!([
        {"text": "Adding.", "toolCalls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]},
        {"text": format!("Done: 5. Your key {key} is safe.")},
    ]);
    let script_file = write_script(dir.path(), turns);
    let flags = [
        &[
            "--otel-endpoint",
            receiver.base.as_str(),
            "--otel-protocol",
            "http/json",
            "--otel-headers",
            "x-team=red%20team",
            "--otel-capture-content",
        ][..],
        QUICK_EXPORT,
    ]
    .concat();
    let app = start(test_config(&url, &script_file, &flags)).await;
    let (session, mut socket) = app.open_session().await;
    let run = app
        .say(&session, &format!("add 2 and 3; my key is {key}"))
        .await;
    socket.until_run_end().await;
    let spans = receiver
        .until("the run's spans", |spans| of_run(spans, &run).is_some())
        .await;
    assert!(
        receiver
            .requests()
            .iter()
            .all(|(kind, team)| kind.starts_with("application/json") && team == "red team"),
        "{:?}",
        receiver.requests()
    );
    let run_span = of_run(&spans, &run).unwrap();
    let input: Value = serde_json::from_str(run_span.text("gen_ai.input.messages")).unwrap();
    assert_eq!(input[0]["role"], "user");
    let said = input[0]["parts"][0]["content"].as_str().unwrap();
    assert!(
        said.starts_with("add 2 and 3") && !said.contains(key),
        "{said}"
    );
    let tool = named(&spans, "execute_tool calculator")[0];
    assert_eq!(
        tool.text("gen_ai.tool.call.arguments"),
        r#"{"expression":"2+3"}"#
    );
    assert!(
        tool.text("gen_ai.tool.call.result").contains('5'),
        "{tool:?}"
    );
    let answer = spans
        .iter()
        .filter_map(|span| span.attribute("gen_ai.output.messages"))
        .map(|value| value.as_str().unwrap().to_string())
        .find(|text| text.contains("Done"))
        .expect("the answer's words");
    assert!(
        !answer.contains(key) && answer.contains("[redacted]"),
        "{answer}"
    );
    assert!(spans.iter().all(|span| !span
        .attributes
        .values()
        .any(|v| v.to_string().contains(key))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_sends_the_spans_still_held() {
    let receiver = Receiver::start();
    let (dir, url) = fresh_database();
    let script_file = write_script(dir.path(), json!([{"text": "Hello there."}]));
    // Spans wait ten minutes to be sent: only the stop sends them.
    let flags = [
        "--otel-endpoint",
        receiver.base.as_str(),
        "--otel-export-delay-ms",
        "600000",
    ];
    let mut tandem = Tandem::spawn_with(&url, &script_file, &flags);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    let run = app.say(&session, "hello").await;
    socket.until_run_end().await;
    assert!(
        receiver.spans().is_empty(),
        "nothing is sent before its time"
    );
    tandem.signal("TERM");
    let status = tandem
        .exited(Duration::from_secs(30))
        .await
        .expect("it stops");
    assert!(status.success(), "{status}: {:?}", tandem.log());
    let spans = receiver.spans();
    let run_span = of_run(&spans, &run).unwrap_or_else(|| panic!("{:?}", otlp::names(&spans)));
    assert_eq!(run_span.text("tandem.run.outcome"), "succeeded");
    assert!(
        named(&spans, "chat").len() + named(&spans, "chat script").len() >= 1,
        "{:?}",
        otlp::names(&spans)
    );
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_go_over_grpc_with_their_headers() {
    let receiver = GrpcReceiver::start();
    let (dir, url) = fresh_database();
    let script_file = write_script(dir.path(), json!([{"text": "Hello there."}]));
    let endpoint = format!("http://127.0.0.1:{}", receiver.port);
    let flags = [
        &[
            "--otel-endpoint",
            endpoint.as_str(),
            "--otel-protocol",
            "grpc",
            "--otel-headers",
            "x-team=blue",
        ][..],
        QUICK_EXPORT,
    ]
    .concat();
    let app = start(test_config(&url, &script_file, &flags)).await;
    let (session, mut socket) = app.open_session().await;
    let run = app.say(&session, "hello").await;
    socket.until_run_end().await;
    let spans = tokio::task::spawn_blocking(move || {
        let spans = receiver.until("invoke_agent tandem");
        drop(receiver);
        spans
    })
    .await
    .unwrap();
    let run_span = spans
        .iter()
        .find(|s| s["name"] == "invoke_agent tandem")
        .unwrap();
    assert_eq!(run_span["attributes"]["tandem.run.id"], run.as_str());
    assert_eq!(
        run_span["attributes"]["gen_ai.conversation.id"],
        session.as_str()
    );
    assert_eq!(run_span["service"], "tandem");
    assert_eq!(
        run_span["team"], "blue",
        "the headers travel as gRPC metadata"
    );
}

/// The `traceparent` a run recorded, if any.
fn recorded_context(log: &[(u64, shared::Event)], run: &str) -> Option<String> {
    let start = log.iter().position(
        |(_, event)| matches!(&event.body, EventBody::RunStarted { run_id, .. } if run_id == run),
    )?;
    log[start..]
        .iter()
        .find_map(|(_, event)| match &event.body {
            EventBody::Custom { name, value } if name == shared::custom::TRACE_CONTEXT => {
                value["traceparent"].as_str().map(str::to_string)
            }
            EventBody::RunFinished { .. } | EventBody::RunError { .. } => Some(String::new()),
            _ => None,
        })
        .filter(|context| !context.is_empty())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_a_socket_or_an_agui_request_starts_keep_the_callers_context_with_tracing_off() {
    let (dir, url) = fresh_database();
    let turns = json!([{"text": "From the socket."}, {"text": "From AG-UI."}, {"text": "Plain."}]);
    let script_file = write_script(dir.path(), turns);
    let app = start(test_config(&url, &script_file, &[])).await;
    let caller = format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01");

    let session = app.create_session().await;
    let mut socket = app
        .try_socket(&session, 0, &[("traceparent", caller.as_str())])
        .await
        .expect("the socket opens");
    socket
        .send(json!({"kind": "user_message", "text": "hello"}))
        .await;
    let ran = socket.until_run_end().await;
    let EventBody::RunStarted {
        run_id: by_socket, ..
    } = &ran[0].1.body
    else {
        panic!("{ran:?}")
    };

    let thread = uuid::Uuid::new_v4().to_string();
    let input = json!({"threadId": thread, "runId": uuid::Uuid::new_v4().to_string(), "state": {},
        "messages": [{"id": "m1", "role": "user", "content": "hi"}], "tools": [], "context": [],
        "forwardedProps": {}});
    let response = app
        .http
        .post(app.url("/api/agui"))
        .header("accept", "text/event-stream")
        .header("traceparent", &caller)
        .json(&input)
        .send()
        .await
        .unwrap();
    let agui_session = response.headers()["tandem-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let body = response.text().await.unwrap();
    assert!(body.contains("RUN_FINISHED"), "{body}");

    let plain = app.say(&session, "no context").await;
    socket.until_run_end().await;

    let log = app.log(&session).await;
    assert_eq!(
        recorded_context(&log, by_socket).as_deref(),
        Some(caller.as_str()),
        "the socket's handshake context"
    );
    let agui_log = app.log(&agui_session).await;
    let agui_run = agui_log
        .iter()
        .find_map(|(_, event)| match &event.body {
            EventBody::RunStarted { run_id, .. } => Some(run_id.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        recorded_context(&agui_log, &agui_run).as_deref(),
        Some(caller.as_str()),
        "the AG-UI request's"
    );
    assert_eq!(
        recorded_context(&log, &plain),
        None,
        "a request with none records none"
    );

    // A later export joins the caller's trace.
    app.stop().await;
    let file = dir.path().join("spans.json");
    export_command(&url, &session, &["--out", file.to_str().unwrap()]);
    let request: opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let spans = otlp::flatten(request);
    let socket_run = of_run(&spans, by_socket).expect("the socket's run");
    assert_eq!(
        (
            socket_run.trace_id.as_str(),
            socket_run.parent_span_id.as_str()
        ),
        (CALLER_TRACE, CALLER_SPAN)
    );
    let plain_run = of_run(&spans, &plain).expect("the plain run");
    assert_ne!(plain_run.trace_id, CALLER_TRACE);
    assert!(
        plain_run.parent_span_id.is_empty(),
        "a root span: {plain_run:?}"
    );
}
