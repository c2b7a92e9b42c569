//! The whole app on the OpenAI-compatible engine: the log, the requests it sends, and
//! its failures as `RUN_ERROR` codes.

use super::*;

/// The app on the openai engine, pointed at a fixture server answering `replies` (fast
/// retries, an extra header to forward; `extra` flags after).
pub(super) async fn app_with(replies: Vec<Reply>, extra: &[&str]) -> (TestApp, ProviderServer) {
    let mut flags = vec!["--retry-base-ms", "10", "--extra-header", "X-Team: tandem"];
    flags.extend_from_slice(extra);
    crate::helpers::provider::openai_app(replies, &flags).await
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

/// The messages of a request after its system message (checked to be Tandem's prompt).
fn messages(server: &ProviderServer, request: usize) -> Value {
    let mut sent = server.requests()[request].body["messages"].clone();
    let messages = sent.as_array_mut().unwrap();
    let system = messages.remove(0);
    assert_eq!(system["role"], "system", "the system prompt comes first");
    assert_eq!(system["content"], tandem::agent::prompt::DEFAULT);
    sent
}

const HEAD: [&str; 5] = [
    "RUN_STARTED",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "STEP_STARTED",
];
/// The answer, then the call's usage (`CUSTOM tandem.usage`) before its step ends.
const ANSWER: [&str; 6] = [
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "CUSTOM",
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
    assert_eq!(squeezed(&events), [&HEAD[..], &ANSWER].concat());
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
    let usage = events.iter().find_map(|(_, event)| match &event.body {
        shared::EventBody::Custom { name, value } if name == shared::custom::USAGE => {
            Some(value.clone())
        }
        _ => None,
    });
    assert_eq!(
        usage.expect("the call's usage")["retries"],
        2,
        "the usage record counts the retries"
    );
    // The registry is the process's, shared with other tests: at least these two.
    let text = app.metrics().await;
    let retries = text
        .lines()
        .find_map(|l| l.strip_prefix("tandem_provider_retries_total{provider=\"openai\"} "))
        .and_then(|v| v.parse::<f64>().ok());
    assert!(retries.is_some_and(|n| n >= 2.0), "{text}");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_a_steering_message_is_read_at_the_next_model_call() {
    // Paced so the steering message is sent while the model still writes its call.
    let paced = sse("openai/tool_call.sse", None, Duration::from_millis(150));
    let replies = vec![paced, Reply::sse("openai/text_after_tool.sse")];
    let (app, server) = app_with(replies, &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "What is 6*7?").await;
    socket.until(|e| e.type_name() == "TOOL_CALL_START").await;
    let (status, body) = app
        .post(
            &format!("/api/sessions/{session}/messages"),
            json!({"text": "Show your working.", "whileRunning": "steer"}),
        )
        .await;
    assert_eq!(
        (status, &body["queued"]["steer"]),
        (202, &json!(true)),
        "{body}"
    );
    let run = socket.until_run_end().await;
    assert_eq!(types(&run).last(), Some(&"RUN_FINISHED"));
    let sent = messages(&server, 1);
    let sent = sent.as_array().unwrap();
    assert_eq!(
        sent.iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["user", "assistant", "tool", "user"],
        "{sent:?}"
    );
    assert_eq!(
        sent[3],
        json!({"role": "user", "content": "Show your working."}),
        "after the call's result, as a message of the person's"
    );
    checked_log(&app, &session).await;
}
