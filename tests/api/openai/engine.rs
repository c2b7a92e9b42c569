//! `OpenAiEngine` alone: its events, retries, failures and hang-up.

use super::*;

#[tokio::test]
async fn text_streams_as_deltas_then_usage_and_the_finish() {
    let (items, server) = call(vec![Reply::sse("openai/text.sse")]).await;
    let events: Vec<EngineEvent> = items.into_iter().map(Result::unwrap).collect();
    assert_eq!(text(&events), "Hello! How can I help you today?");
    let usage = CallUsage {
        provider: Some("openai".into()),
        model: Some("gpt-4.1-mini-2025-04-14".into()),
        input_tokens: 112,
        output_tokens: 10,
        ..CallUsage::default()
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
        EngineEvent::Usage(usage) => Some(usage.reasoning_tokens),
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
