//! The OpenAI-compatible engine against a local server replaying Chat Completions
//! fixtures (`tests/fixtures/openai/`): first the engine alone, then the whole app, where
//! its events must land in the log as valid AG-UI and its failures as the right
//! `RUN_ERROR` codes, never showing the API key.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{json, Value};
use shared::{Event, EventBody, Outcome, TokenUsage};
use tandem::agent::conversation::ChatMessage;
use tandem::agent::engines::http::RetryPolicy;
use tandem::agent::engines::{
    Engine, EngineError, EngineEvent, FinishReason, ModelRequest, OpenAiEngine,
};
use tandem::config::ProviderSettings;

use crate::helpers::provider::{fixture, ProviderServer, Reply};
use crate::helpers::socket::interrupt_id;
use crate::helpers::{assert_valid_session, spawn_app_with, types, TestApp};

const KEY: &str = "sk-test-123";

type Item = Result<EngineEvent, EngineError>;

fn settings(server: &ProviderServer) -> ProviderSettings {
    ProviderSettings {
        base_url: format!("{}/v1", server.url),
        api_key: Some(KEY.parse().unwrap()),
        model: "gpt-4.1-mini".into(),
        temperature: None,
        max_tokens: 1024,
        thinking_budget: None,
        extra_headers: vec![("X-Team".into(), "tandem".into())],
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        },
    }
}

fn hello() -> ModelRequest {
    ModelRequest {
        conversation: vec![ChatMessage::User { text: "Hi".into() }],
        tools: vec![],
        model_call_index: 0,
    }
}

/// One engine call answered by `replies`: every item it streamed, and the server.
async fn call(replies: Vec<Reply>) -> (Vec<Item>, ProviderServer) {
    let server = ProviderServer::start(replies).await;
    let engine = OpenAiEngine::new(settings(&server)).unwrap();
    let items = engine.stream(hello()).collect().await;
    (items, server)
}

async fn events_of(reply: Reply) -> Vec<EngineEvent> {
    let (items, _) = call(vec![reply]).await;
    items.into_iter().map(|item| item.unwrap()).collect()
}

fn failure(items: &[Item]) -> &EngineError {
    match items.last() {
        Some(Err(error)) => error,
        other => panic!("the call should fail last, got {other:?}"),
    }
}

fn sse(name: &str, cut_after: Option<usize>, pace: Duration) -> Reply {
    Reply::Sse {
        body: fixture(name),
        split_every: None,
        pace,
        cut_after,
    }
}

/// The text, reasoning and arguments of each call, concatenated.
fn joined(events: &[EngineEvent], pick: impl Fn(&EngineEvent) -> Option<&str>) -> String {
    events.iter().filter_map(pick).collect()
}

fn text(events: &[EngineEvent]) -> String {
    joined(events, |e| match e {
        EngineEvent::TextDelta(delta) => Some(delta),
        _ => None,
    })
}

fn reasoning(events: &[EngineEvent]) -> String {
    joined(events, |e| match e {
        EngineEvent::ReasoningDelta(delta) => Some(delta),
        _ => None,
    })
}

fn arguments(events: &[EngineEvent], id: &str) -> Value {
    let text = joined(events, |e| match e {
        EngineEvent::ToolCallArgs { id: of, delta } if of == id => Some(delta),
        _ => None,
    });
    serde_json::from_str(&text).unwrap()
}

fn position(events: &[EngineEvent], wanted: impl Fn(&EngineEvent) -> bool) -> usize {
    events.iter().position(wanted).expect("the event is there")
}

#[tokio::test]
async fn text_streams_as_deltas_then_usage_and_the_finish() {
    let (items, server) = call(vec![Reply::sse("openai/text.sse")]).await;
    let events: Vec<EngineEvent> = items.into_iter().map(Result::unwrap).collect();
    assert_eq!(text(&events), "Hello! How can I help you today?");
    let usage = TokenUsage {
        provider: Some("openai".into()),
        model: Some("gpt-4.1-mini-2025-04-14".into()),
        input_tokens: Some(112),
        output_tokens: Some(10),
        reasoning_tokens: Some(0),
    };
    let tail = &events[events.len() - 2..];
    assert_eq!(
        tail,
        [
            EngineEvent::Usage(usage),
            EngineEvent::Finish(FinishReason::Stop)
        ]
    );
    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-123"));
    assert_eq!(request.header("x-team"), Some("tandem"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(
        request.body,
        json!({
            "model": "gpt-4.1-mini",
            "messages": [{"role": "user", "content": "Hi"}],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 1024
        })
    );
}

#[tokio::test]
async fn reasoning_content_then_text() {
    let events = events_of(Reply::sse("openai/reasoning.sse")).await;
    assert_eq!(
        reasoning(&events),
        "The user asks for 6 times 7. That is 42."
    );
    assert_eq!(text(&events), "6 × 7 = 42.");
    let end = position(&events, |e| matches!(e, EngineEvent::ReasoningEnd { .. }));
    let first_text = position(&events, |e| matches!(e, EngineEvent::TextDelta(_)));
    assert_eq!(end + 1, first_text, "reasoning ends as the text starts");
    let usage = events.iter().find_map(|e| match e {
        EngineEvent::Usage(usage) => usage.reasoning_tokens,
        _ => None,
    });
    assert_eq!(usage, Some(17));
}

#[tokio::test]
async fn openrouter_reasoning_with_keep_alive_comments() {
    let events = events_of(Reply::sse("openai/openrouter_reasoning.sse")).await;
    assert_eq!(reasoning(&events), "Greet the person.");
    assert_eq!(text(&events), "Hi there!");
    assert_eq!(
        events.last(),
        Some(&EngineEvent::Finish(FinishReason::Stop))
    );
}

#[tokio::test]
async fn one_tool_call_with_arguments_over_many_chunks() {
    let events = events_of(Reply::sse("openai/tool_call.sse")).await;
    let id = "call_Vx3kP9qLm2TzR8wYd4NcJ6sA";
    let start = EngineEvent::ToolCallStart {
        id: id.into(),
        name: "calculator".into(),
    };
    assert_eq!(events[0], start);
    assert_eq!(arguments(&events, id), json!({"expression": "6*7"}));
    let args = events
        .iter()
        .filter(|e| matches!(e, EngineEvent::ToolCallArgs { .. }));
    assert_eq!(args.count(), 7);
    assert_eq!(events[8], EngineEvent::ToolCallEnd { id: id.into() });
    assert_eq!(
        events.last(),
        Some(&EngineEvent::Finish(FinishReason::ToolCalls))
    );
}

#[tokio::test]
async fn parallel_calls_interleave_and_each_starts_before_its_arguments() {
    let events = events_of(Reply::sse("openai/parallel_tool_calls.sse")).await;
    let calls = [
        ("call_Qm8Zt2Lx5RkW9pYv3HdN7cFe", "6*7"),
        ("call_Hs4Jn7Xc1VbT6qMz9RwK2yPa", "2^10"),
    ];
    for (id, expression) in calls {
        assert_eq!(arguments(&events, id), json!({"expression": expression}));
        let start = position(
            &events,
            |e| matches!(e, EngineEvent::ToolCallStart { id: of, .. } if of == id),
        );
        let first = position(
            &events,
            |e| matches!(e, EngineEvent::ToolCallArgs { id: of, .. } if of == id),
        );
        let end = position(
            &events,
            |e| matches!(e, EngineEvent::ToolCallEnd { id: of } if of == id),
        );
        let last = events
            .iter()
            .rposition(|e| matches!(e, EngineEvent::ToolCallArgs { id: of, .. } if of == id));
        assert!(start < first && Some(end) > last, "{events:?}");
    }
}

#[tokio::test]
async fn ollama_sends_a_whole_call_in_one_fragment() {
    let events = events_of(Reply::sse("openai/ollama_tool_call.sse")).await;
    assert_eq!(
        arguments(&events, "call_p3x7kq2m"),
        json!({"expression": "6*7"})
    );
    assert!(matches!(&events[2], EngineEvent::ToolCallEnd { id } if id == "call_p3x7kq2m"));
}

#[tokio::test]
async fn sse_split_at_any_byte_gives_the_same_events() {
    for name in [
        "text",
        "reasoning",
        "openrouter_reasoning",
        "tool_call",
        "parallel_tool_calls",
        "ollama_tool_call",
    ] {
        let name = format!("openai/{name}.sse");
        let split = Reply::Sse {
            body: fixture(&name),
            split_every: Some(7),
            pace: Duration::ZERO,
            cut_after: None,
        };
        assert_eq!(
            events_of(split).await,
            events_of(Reply::sse(&name)).await,
            "{name}"
        );
    }
}

#[tokio::test]
async fn a_429_waits_its_retry_after_then_succeeds() {
    let started = Instant::now();
    let limited = Reply::status(429, &[("retry-after", "1")], "openai/rate_limit.json");
    let (items, server) = call(vec![limited, Reply::sse("openai/text.sse")]).await;
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body);
}

#[tokio::test]
async fn a_500_is_retried() {
    let broken = Reply::status(500, &[], "openai/server_error.json");
    let (items, server) = call(vec![broken, Reply::sse("openai/text.sse")]).await;
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn cut_malformed_and_failing_streams_end_with_their_codes() {
    let cases = [
        (
            sse("openai/text.sse", Some(4), Duration::ZERO),
            "stream_interrupted",
        ),
        (Reply::sse("openai/malformed.sse"), "malformed_response"),
        (Reply::sse("openai/stream_error.sse"), "provider_error"),
    ];
    for (reply, code) in cases {
        let (items, _) = call(vec![reply]).await;
        let error = failure(&items);
        assert_eq!(error.code, code, "{error}");
        assert!(!error.message.contains(KEY));
    }
}

#[tokio::test]
async fn dropping_the_stream_hangs_up_at_once() {
    let mut server = ProviderServer::start(vec![sse(
        "openai/text.sse",
        None,
        Duration::from_millis(100),
    )])
    .await;
    let engine = OpenAiEngine::new(settings(&server)).unwrap();
    let mut stream = engine.stream(hello());
    assert!(matches!(
        stream.next().await,
        Some(Ok(EngineEvent::TextDelta(_)))
    ));
    drop(stream);
    // The role chunk and the first text went out; the hang-up is seen before the next.
    let sent = server.client_hung_up().await;
    assert!(
        sent <= 3,
        "{sent} chunks went out before the hang-up was seen"
    );
}

// ---- end to end, through the real app ----

/// The app on the openai engine, pointed at a fixture server answering `replies`.
async fn app_with(replies: Vec<Reply>, extra: &[&str]) -> (TestApp, ProviderServer) {
    let server = ProviderServer::start(replies).await;
    let base = format!("{}/v1", server.url);
    let mut flags = vec![
        "--engine",
        "openai",
        "--openai-base-url",
        &base,
        "--openai-api-key",
        KEY,
        "--retry-base-ms",
        "10",
        "--extra-header",
        "X-Team: tandem",
    ];
    flags.extend_from_slice(extra);
    (spawn_app_with(json!([]), &flags).await, server)
}

/// The log, checked: valid AG-UI, every run ended, the key nowhere.
async fn checked_log(app: &TestApp, session: &str) -> Vec<(u64, Event)> {
    let log = app.log(session).await;
    assert_valid_session(&log, true);
    assert!(!serde_json::to_string(&log).unwrap().contains(KEY));
    log
}

/// Consecutive repeats of an event type collapsed into one.
fn squeezed(events: &[(u64, Event)]) -> Vec<&'static str> {
    let mut all = types(events);
    all.dedup();
    all
}

fn messages(server: &ProviderServer, request: usize) -> Value {
    server.requests()[request].body["messages"].clone()
}

const HEAD: [&str; 5] = [
    "RUN_STARTED",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "STEP_STARTED",
];
const ANSWER: [&str; 5] = [
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "STEP_FINISHED",
    "RUN_FINISHED",
];

/// The model's text in a run's events (what follows its first model call step).
fn model_text(events: &[(u64, Event)]) -> String {
    let step = events
        .iter()
        .position(|(_, e)| e.type_name() == "STEP_STARTED");
    let after = &events[step.expect("a model call")..];
    after
        .iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::TextMessageContent { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_text_reaches_the_log() {
    let (app, server) = app_with(vec![Reply::sse("openai/text.sse")], &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Hi").await;
    let events = socket.until_run_end().await;
    assert_eq!(squeezed(&events), [HEAD, ANSWER].concat());
    assert_eq!(model_text(&events), "Hello! How can I help you today?");
    let request = &server.requests()[0];
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-123"));
    assert_eq!(request.header("x-team"), Some("tandem"));
    checked_log(&app, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_reasoning_reaches_the_log_and_is_never_sent_back() {
    let replies = vec![
        Reply::sse("openai/reasoning.sse"),
        Reply::sse("openai/text.sse"),
    ];
    let (app, server) = app_with(replies, &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "What is 6*7?").await;
    let events = socket.until_run_end().await;
    let thought = [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    ];
    assert_eq!(squeezed(&events), [&HEAD[..], &thought, &ANSWER].concat());
    app.say(&session, "Thanks").await;
    socket.until_run_end().await;
    let expected = json!([
        {"role": "user", "content": "What is 6*7?"},
        {"role": "assistant", "content": "6 × 7 = 42."},
        {"role": "user", "content": "Thanks"}
    ]);
    assert_eq!(messages(&server, 1), expected);
    checked_log(&app, &session).await;
}

/// A call as the request must send it back (`arguments` a JSON string).
fn sent_call(id: &str, name: &str, arguments: Value) -> Value {
    json!({
        "id": id,
        "type": "function",
        "function": {"name": name, "arguments": arguments.to_string()}
    })
}

/// What the model saw by its second call: the question, its calculator call, the result.
fn first_turn() -> Vec<Value> {
    let id = "call_Vx3kP9qLm2TzR8wYd4NcJ6sA";
    let call = sent_call(id, "calculator", json!({"expression": "6*7"}));
    vec![
        json!({"role": "user", "content": "What is 6*7? Then sign a note."}),
        json!({"role": "assistant", "content": null, "tool_calls": [call]}),
        json!({
            "role": "tool",
            "tool_call_id": id,
            "content": json!({"expression": "6*7", "result": 42}).to_string()
        }),
    ]
}

/// The second model turn (text and a question) and the person's answer.
fn question_and_answer() -> Vec<Value> {
    let id = "call_Ld5Rw8Ns3KpX1mVb7QtY4zHc";
    let arguments = json!({"prompt": "What name should I sign the note with?", "kind": "text"});
    let answer = json!({"status": "resolved", "payload": {"text": "Ada"}});
    vec![
        json!({
            "role": "assistant",
            "content": "It is 42.",
            "tool_calls": [sent_call(id, "request_input", arguments)]
        }),
        json!({"role": "tool", "tool_call_id": id, "content": answer.to_string()}),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_a_tool_call_then_a_question_then_the_answer() {
    let replies = ["tool_call", "request_input", "text_after_answer", "text"]
        .map(|name| Reply::sse(&format!("openai/{name}.sse")))
        .to_vec();
    let (app, server) = app_with(replies, &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "What is 6*7? Then sign a note.").await;
    let paused = socket.until_run_end().await;
    let mut sent = first_turn();
    assert_eq!(messages(&server, 1), Value::Array(sent.clone()));
    let question = match &paused.last().unwrap().1.body {
        EventBody::RunFinished {
            outcome: Some(Outcome::Interrupt { interrupts }),
            ..
        } => interrupts[0].message.clone(),
        other => panic!("expected a question, got {other:?}"),
    };
    assert_eq!(
        question.as_deref(),
        Some("What name should I sign the note with?")
    );

    let id = interrupt_id(&paused);
    let payload = json!({"text": "Ada"});
    socket
        .send(
            json!({"kind": "resume", "interruptId": id, "status": "resolved", "payload": payload}),
        )
        .await;
    let resumed = socket.until_run_end().await;
    assert_eq!(model_text(&resumed), "Thanks, Ada. The answer is 42.");
    sent.extend(question_and_answer());
    assert_eq!(messages(&server, 2), Value::Array(sent.clone()));

    app.say(&session, "Thanks").await;
    socket.until_run_end().await;
    sent.push(json!({"role": "assistant", "content": "Thanks, Ada. The answer is 42."}));
    sent.push(json!({"role": "user", "content": "Thanks"}));
    assert_eq!(messages(&server, 3), Value::Array(sent));
    let log = checked_log(&app, &session).await;
    let calls = log
        .iter()
        .filter(|(_, e)| e.type_name() == "TOOL_CALL_START");
    assert_eq!(calls.count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_parallel_calls_are_answered_in_order() {
    let replies = vec![
        Reply::sse("openai/parallel_tool_calls.sse"),
        Reply::sse("openai/text_after_tool.sse"),
    ];
    let (app, server) = app_with(replies, &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "6*7 and 2^10?").await;
    let events = socket.until_run_end().await;
    assert_eq!(types(&events).last(), Some(&"RUN_FINISHED"));
    let sent = messages(&server, 1);
    let ids: Vec<&str> = sent[1]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "call_Qm8Zt2Lx5RkW9pYv3HdN7cFe",
            "call_Hs4Jn7Xc1VbT6qMz9RwK2yPa"
        ]
    );
    for (at, (id, result)) in ids.iter().zip([42, 1024]).enumerate() {
        let tool = &sent[2 + at];
        assert_eq!(
            (tool["role"].as_str(), tool["tool_call_id"].as_str()),
            (Some("tool"), Some(*id))
        );
        let content: Value = serde_json::from_str(tool["content"].as_str().unwrap()).unwrap();
        assert_eq!(content["result"], result);
    }
    checked_log(&app, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_a_429_and_a_500_are_retried_before_the_answer() {
    let limited = Reply::status(429, &[("retry-after", "1")], "openai/rate_limit.json");
    let broken = Reply::status(500, &[], "openai/server_error.json");
    let (app, server) = app_with(vec![limited, broken, Reply::sse("openai/text.sse")], &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Hi").await;
    let events = socket.until_run_end().await;
    assert_eq!(types(&events).last(), Some(&"RUN_FINISHED"));
    assert_eq!(server.requests().len(), 3);
    checked_log(&app, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_failures_end_the_run_with_their_code_and_never_the_key() {
    let cases = [
        (
            Reply::status(429, &[("retry-after", "1")], "openai/rate_limit.json"),
            "rate_limited",
        ),
        (
            Reply::status(500, &[], "openai/server_error.json"),
            "provider_unavailable",
        ),
        (
            Reply::status(401, &[], "openai/invalid_key.json"),
            "provider_auth",
        ),
        (
            sse("openai/text.sse", Some(4), Duration::ZERO),
            "stream_interrupted",
        ),
        (Reply::sse("openai/malformed.sse"), "malformed_response"),
        (Reply::sse("openai/stream_error.sse"), "provider_error"),
    ];
    let replies = cases.iter().map(|(reply, _)| reply.clone()).collect();
    let (app, _server) = app_with(replies, &["--max-retries", "0"]).await;
    let (session, mut socket) = app.open_session().await;
    for (_, code) in cases {
        app.say(&session, "Hi").await;
        let events = socket.until_run_end().await;
        match &events.last().unwrap().1.body {
            EventBody::RunError { code: got, message } => {
                assert_eq!(got.as_deref(), Some(code), "{message}");
                assert!(!message.contains(KEY), "{message}");
            }
            other => panic!("expected RUN_ERROR {code}, got {other:?}"),
        }
    }
    checked_log(&app, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_stop_hangs_up_on_the_provider() {
    let slow = sse("openai/text.sse", None, Duration::from_millis(100));
    let (app, mut server) = app_with(vec![slow], &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Hi").await;
    socket.until(|e| e.type_name() == "STEP_STARTED").await;
    socket
        .until(|e| e.type_name() == "TEXT_MESSAGE_CONTENT")
        .await;
    socket.send(json!({"kind": "cancel"})).await;
    let events = socket.until_run_end().await;
    let cancelled = matches!(
        &events.last().unwrap().1.body,
        EventBody::RunFinished {
            outcome: Some(Outcome::Cancelled),
            ..
        }
    );
    assert!(cancelled, "{events:?}");
    let chunks = fixture("openai/text.sse").matches("\n\n").count();
    assert!(server.client_hung_up().await < chunks);
    checked_log(&app, &session).await;
}
