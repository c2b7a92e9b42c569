//! Streaming: what a run writes to the log and sends, in order, and how tools behave.

use serde_json::json;
use shared::{EventBody, Outcome};

use crate::helpers::{assert_valid_session, spawn_app, types};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_streams_reasoning_text_and_a_tool_call_in_order() {
    let app = spawn_app(json!([
        {"reasoning": "Use the calculator.", "text": "Let me compute.", "toolCalls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]},
        {"text": "It is 42."}
    ]))
    .await;
    let session = app.create_session().await;
    let mut socket = app.socket(&session, 0).await;
    assert_eq!(socket.backlog().await, (vec![], 0));
    let run_id = app.say(&session, "what is 6*7").await;
    let events = socket.until_run_end().await;
    // Deltas committed together are one event (AG-UI allows any chunking): the kinds in
    // order, each run of deltas collapsed, and the text each one assembles.
    let mut kinds = types(&events);
    kinds.dedup();
    assert_eq!(
        kinds,
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "STEP_STARTED",
            "REASONING_START",
            "REASONING_MESSAGE_START",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_MESSAGE_END",
            "REASONING_END",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "STEP_FINISHED",
            "TOOL_CALL_RESULT",
            "STEP_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "STEP_FINISHED",
            "RUN_FINISHED"
        ]
    );
    let assembled = |wanted: &str| -> String {
        events
            .iter()
            .filter_map(|(_, e)| match &e.body {
                EventBody::ReasoningMessageContent { delta, .. } if wanted == "reasoning" => {
                    Some(delta.as_str())
                }
                EventBody::ToolCallArgs { delta, .. } if wanted == "args" => Some(delta.as_str()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(assembled("reasoning"), "Use the calculator.");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&assembled("args")).unwrap(),
        json!({"expression": "6*7"})
    );
    match &events[0].1.body {
        EventBody::RunStarted {
            thread_id,
            run_id: started,
            ..
        } => {
            assert_eq!(thread_id, &session);
            assert_eq!(started, &run_id);
        }
        other => panic!("{other:?}"),
    }
    let result = events.iter().find_map(|(_, e)| match &e.body {
        EventBody::ToolCallResult { content, .. } => Some(content.clone()),
        _ => None,
    });
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&result.unwrap()).unwrap()["result"],
        42
    );
    let after_result = events
        .iter()
        .position(|(_, e)| e.type_name() == "TOOL_CALL_RESULT")
        .unwrap();
    let text: String = events[after_result..]
        .iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::TextMessageContent { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "It is 42.");
    assert!(matches!(
        &events.last().unwrap().1.body,
        EventBody::RunFinished {
            outcome: Some(Outcome::Success { .. }),
            ..
        }
    ));
    let log = app.log(&session).await;
    assert_eq!(log, events, "what the socket saw is exactly the log");
    assert_valid_session(&log, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tools_and_bad_arguments_come_back_to_the_model_as_errors() {
    let app = spawn_app(json!([
        {"toolCalls": [{"name": "teleport", "arguments": {}}, {"name": "calculator", "arguments": {"expr": "1"}}]},
        {"text": "Sorry."}
    ]))
    .await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    let events = socket.until_run_end().await;
    let results: Vec<String> = events
        .iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::ToolCallResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert!(results[0].contains("unknown tool"), "{}", results[0]);
    assert!(results[1].contains("invalid arguments"), "{}", results[1]);
    assert_eq!(events.last().unwrap().1.type_name(), "RUN_FINISHED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_that_runs_out_ends_the_run_with_script_exhausted() {
    let app = spawn_app(json!([{"text": "one"}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "first").await;
    socket.until_run_end().await;
    app.say(&session, "second").await;
    let events = socket.until_run_end().await;
    match &events.last().unwrap().1.body {
        EventBody::RunError { code, .. } => assert_eq!(code.as_deref(), Some("script_exhausted")),
        other => panic!("{other:?}"),
    }
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_limited_in_model_calls() {
    let call = json!({"toolCalls": [{"name": "clock", "arguments": {}}]});
    let app = spawn_app(json!(vec![call; 12])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "loop").await;
    let events = socket.until_run_end().await;
    let steps = events
        .iter()
        .filter(|(_, e)| e.type_name() == "STEP_STARTED")
        .count();
    assert_eq!(steps, 10);
    match &events.last().unwrap().1.body {
        EventBody::RunError { code, .. } => assert_eq!(code.as_deref(), Some("max_model_calls")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_closes_everything_and_finishes_cancelled() {
    let long = "word ".repeat(400);
    let turns = json!([{"reasoning": long, "text": long}]);
    let app = crate::helpers::spawn_app_with(turns, &["--token-delay-ms", "5"]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "talk").await;
    socket
        .until(|e| e.type_name() == "REASONING_MESSAGE_CONTENT")
        .await;
    socket.send(json!({"kind": "cancel"})).await;
    let events = socket.until_run_end().await;
    assert!(matches!(
        &events.last().unwrap().1.body,
        EventBody::RunFinished {
            outcome: Some(Outcome::Cancelled),
            ..
        }
    ));
    let log = app.log(&session).await;
    assert_valid_session(&log, true);
    let (_, body) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(body["status"], "idle");
}
