//! Tools an AG-UI client declares and runs itself: the run ends with their calls
//! pending, the client's `tool` messages resume it, and an unanswered call expires or is
//! stopped like a question.

use serde_json::{json, Value};
use uuid::Uuid;

use super::{events, input, logged, outcome, post, run, user};
use crate::helpers::{assert_valid_session, spawn_app, spawn_app_with, TestApp};

#[tokio::test]
async fn client_tools_end_the_run_with_pending_calls_and_their_results_resume_it() {
    let app = spawn_app(json!([
        {"text": "Showing a card.", "toolCalls": [
            {"name": "show_card", "arguments": {"title": "Hello"}},
            {"name": "calculator", "arguments": {"expression": "2+3"}},
        ]},
        {"text": "The card is up."},
    ]))
    .await;
    let thread = Uuid::new_v4().to_string();
    let card = json!({"name": "show_card", "description": "Shows a card to the person",
                      "parameters": {"type": "object", "properties": {"title": {"type": "string"}}}});
    let mut first = input(&thread, vec![user("u1", "Show me a card")]);
    first["tools"] = json!([card]);
    let (session, paused) = run(&app, &first).await;
    let call_id = paused
        .iter()
        .find(|e| e["type"] == "TOOL_CALL_START" && e["toolCallName"] == "show_card")
        .map(|e| e["toolCallId"].clone())
        .expect("the model called the client's tool");
    assert_eq!(
        outcome(&paused),
        &json!({"type": "success", "pendingToolCallIds": [call_id]})
    );
    assert!(
        paused.iter().any(|e| e["type"] == "TOOL_CALL_RESULT"
            && e["content"].as_str().unwrap().contains(r#""result":5"#)),
        "the server's own tool ran: {paused:?}"
    );
    let (_, summary) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(summary["status"], "awaiting_input");
    assert_eq!(summary["pendingInterrupts"][0]["reason"], "client_tools");

    let mut messages = first["messages"].as_array().unwrap().clone();
    messages.push(json!({"id": "t1", "role": "tool", "toolCallId": call_id, "content": "shown"}));
    let mut second = input(&thread, messages);
    second["tools"] = json!([card]);
    let resumed = events(post(&app, &second).await).await;
    assert_eq!(resumed[0]["type"], "RUN_STARTED");
    assert_eq!(resumed[0]["input"]["messages"][0]["id"], "t1");
    assert!(
        !resumed.iter().any(|e| e["type"] == "TOOL_CALL_RESULT"),
        "the client's result travels in RUN_STARTED.input only: {resumed:?}"
    );
    let said: String = resumed.iter().filter_map(|e| e["delta"].as_str()).collect();
    assert!(
        said.ends_with(" up."),
        "the model went on with the result: {said}"
    );
    assert_eq!(outcome(&resumed), &json!({"type": "success"}));
    let paused_len = paused.len();
    assert_eq!(resumed, logged(&app, &session, &thread, paused_len).await);

    let mut clash = input(&Uuid::new_v4().to_string(), vec![user("u2", "Hi")]);
    clash["tools"] = json!([{"name": "calculator", "description": "mine"}]);
    let (status, body) =
        crate::helpers::status_and_json(app.http.post(app.url("/api/agui")).json(&clash)).await;
    assert_eq!(status, 422, "{body}");
}

/// A thread paused on a call of the client's `show_card`; returns its session and the
/// call's id.
async fn waiting_for_the_client(app: &TestApp) -> (String, String) {
    let thread = Uuid::new_v4().to_string();
    let mut first = input(&thread, vec![user("u1", "Show me a card")]);
    first["tools"] = json!([{"name": "show_card", "description": "Shows a card"}]);
    let (session, paused) = run(app, &first).await;
    let call = outcome(&paused)["pendingToolCallIds"][0].as_str().unwrap();
    (session, call.to_string())
}

fn card_script() -> Value {
    json!([
        {"toolCalls": [{"name": "show_card", "arguments": {"title": "Hi"}}]},
        {"text": "No card, then."},
    ])
}

/// The result the log holds for `call`.
async fn logged_result(app: &TestApp, session: &str, call: &str) -> Value {
    let log = app.log(session).await;
    log.iter()
        .find_map(|(_, event)| match &event.body {
            shared::EventBody::ToolCallResult {
                tool_call_id,
                content,
                ..
            } if tool_call_id == call => Some(serde_json::from_str(content).unwrap()),
            _ => None,
        })
        .expect("a result of the call")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_call_without_a_result_expires_like_a_question() {
    let app = spawn_app_with(card_script(), &["--input-timeout-secs", "1"]).await;
    let (session, call) = waiting_for_the_client(&app).await;
    let (_, summary) = app.get(&format!("/api/sessions/{session}")).await;
    assert!(summary["pendingInterrupts"][0]["expiresAt"].is_string());
    // The server's own sweeper ends the wait: the socket sees the run that follows.
    let mut socket = app
        .socket(&session, app.log(&session).await.len() as u64)
        .await;
    let continued = socket.until_run_end().await;
    assert_eq!(continued[0].1.type_name(), "RUN_STARTED");
    let result = logged_result(&app, &session, &call).await;
    assert_eq!(result["status"], "expired", "{result}");
    let (_, summary) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(summary["status"], "idle");
}

#[tokio::test]
async fn stopping_a_thread_that_waits_for_the_client_cancels_its_calls() {
    let app = spawn_app(card_script()).await;
    let (session, call) = waiting_for_the_client(&app).await;
    let (status, body) = app
        .post(&format!("/api/sessions/{session}/cancel"), json!({}))
        .await;
    assert_eq!(status, 202, "{body}");
    let result = logged_result(&app, &session, &call).await;
    assert_eq!(result["status"], "cancelled", "{result}");
    let log = app.log(&session).await;
    assert_valid_session(&log, true);
    let (_, summary) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(summary["status"], "idle");
}
