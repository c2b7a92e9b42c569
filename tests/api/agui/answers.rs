//! Answers over AG-UI that must be refused, and ones that must survive: a late or
//! malformed `resume`, tool results that leave a call unanswered, a model picked in
//! `forwardedProps`, the client's `runId` as the run's id, and a restart while the
//! client's tools are pending.

use serde_json::{json, Value};
use uuid::Uuid;

use super::{events, input, outcome, post, run, user};
use crate::helpers::child::Tandem;
use crate::helpers::{
    assert_valid_session, fresh_database, spawn_app, spawn_app_with, status_and_json, write_script,
    TestApp,
};

fn question(timeout: Option<u64>) -> Value {
    let mut arguments = json!({"prompt": "Your name?", "kind": "text"});
    if let Some(seconds) = timeout {
        arguments["timeoutSeconds"] = json!(seconds);
    }
    json!([{"toolCalls": [{"name": "request_input", "arguments": arguments}]}, {"text": "Moving on."}])
}

/// A thread paused on a question: its session, the input that paused it and the
/// interrupt.
async fn paused(app: &TestApp) -> (String, Value, String) {
    let thread = Uuid::new_v4().to_string();
    let first = input(&thread, vec![user("u1", "Hi")]);
    let (session, streamed) = run(app, &first).await;
    let interrupt = outcome(&streamed)["interrupts"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    (session, first, interrupt)
}

fn resume(first: &Value, interrupt: &str, payload: Value) -> Value {
    let mut resume = first.clone();
    resume["runId"] = json!(Uuid::new_v4().to_string());
    resume["resume"] =
        json!([{"interruptId": interrupt, "status": "resolved", "payload": payload}]);
    resume
}

async fn refused(app: &TestApp, input: &Value) -> (u16, Value) {
    status_and_json(app.http.post(app.url("/api/agui")).json(input)).await
}

#[tokio::test]
async fn a_late_or_malformed_resume_is_refused_with_its_status() {
    let app = spawn_app(question(None)).await;
    let (session, first, interrupt) = paused(&app).await;
    let (status, body) = refused(&app, &resume(&first, &interrupt, json!({"name": 7}))).await;
    assert_eq!(
        status, 422,
        "a payload that fails the question's schema: {body}"
    );
    assert_eq!(body["error"]["code"], "invalid_payload");
    let (_, summary) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(summary["status"], "awaiting_input", "nothing changed");

    let app = spawn_app_with(question(Some(1)), &[]).await;
    let (session, first, interrupt) = paused(&app).await;
    let mut socket = app
        .socket(&session, app.log(&session).await.len() as u64)
        .await;
    socket.until_run_end().await; // the server's sweeper expired it
    let (status, body) = refused(&app, &resume(&first, &interrupt, json!({"text": "Ada"}))).await;
    assert_eq!(status, 410, "{body}");
    assert_eq!(body["error"]["code"], "interrupt_expired");
    assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test]
async fn tool_results_that_leave_a_call_unanswered_are_refused() {
    let app = spawn_app(json!([
        {"toolCalls": [
            {"name": "show_card", "arguments": {"title": "A"}},
            {"name": "show_card", "arguments": {"title": "B"}},
        ]},
        {"text": "Both shown."},
    ]))
    .await;
    let thread = Uuid::new_v4().to_string();
    let mut first = input(&thread, vec![user("u1", "Two cards")]);
    first["tools"] = json!([{"name": "show_card", "description": "Shows a card"}]);
    let (session, streamed) = run(&app, &first).await;
    let calls = outcome(&streamed)["pendingToolCallIds"].clone();
    assert_eq!(calls.as_array().unwrap().len(), 2, "{calls}");
    let mut messages = first["messages"].as_array().unwrap().clone();
    messages.push(json!({"id": "t1", "role": "tool", "toolCallId": calls[0], "content": "shown"}));
    let mut partial = input(&thread, messages);
    partial["tools"] = first["tools"].clone();
    let (status, body) = refused(&app, &partial).await;
    assert_eq!(status, 422, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("no result for tool call"), "{message}");
    let (_, summary) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(
        summary["status"], "awaiting_input",
        "still waiting for both"
    );
}

#[tokio::test]
async fn forwarded_props_pick_a_model_and_the_clients_run_id_is_the_runs() {
    let app = spawn_app_with(
        json!([{"text": "One."}, {"text": "Two."}]),
        &["--models", "model-b"],
    )
    .await;
    let thread = Uuid::new_v4().to_string();
    let mut first = input(&thread, vec![user("u1", "Hi")]);
    first["forwardedProps"] = json!({"model": "model-b"});
    let streamed = events(post(&app, &first).await).await;
    assert_eq!(
        streamed[0]["runId"], first["runId"],
        "RUN_STARTED names the client's run"
    );
    assert_eq!(streamed.last().unwrap()["runId"], first["runId"]);
    assert_eq!(
        (&streamed[1]["name"], &streamed[1]["value"]),
        (
            &json!("tandem.model_selected"),
            &json!({"model": "model-b"})
        ),
        "the pick is committed with the run"
    );

    let mut unknown = input(&thread, vec![user("u1", "Hi"), user("u2", "Again")]);
    unknown["forwardedProps"] = json!({"model": "model-z"});
    let (status, body) = refused(&app, &unknown).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("model-b"));

    let mut bad = input(&thread, vec![user("u1", "Hi"), user("u2", "Again")]);
    bad["runId"] = json!("not a run id");
    let (status, _) = refused(&app, &bad).await;
    assert_eq!(status, 400, "a runId that cannot be a run's id");

    let mut same = input(&thread, vec![user("u1", "Hi"), user("u3", "Other")]);
    same["runId"] = first["runId"].clone();
    let again = events(post(&app, &same).await).await;
    assert_eq!(again, streamed, "a runId the thread used replays its run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_tools_pending_across_a_restart_are_answered_after_it() {
    let (db_dir, url) = fresh_database();
    let turns = json!([
        {"toolCalls": [{"name": "show_card", "arguments": {"title": "Hi"}}]},
        {"text": "The card survived."},
    ]);
    let script = write_script(db_dir.path(), turns);
    let mut tandem = Tandem::spawn(&url, &script);
    let app = tandem.client();
    let thread = Uuid::new_v4().to_string();
    let mut first = input(&thread, vec![user("u1", "Show a card")]);
    first["tools"] = json!([{"name": "show_card", "description": "Shows a card"}]);
    let (session, paused) = run(&app, &first).await;
    let call = outcome(&paused)["pendingToolCallIds"][0].clone();

    tandem.kill();
    let tandem = Tandem::spawn(&url, &script);
    let app = tandem.client();
    let (_, summary) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(summary["pendingInterrupts"][0]["reason"], "client_tools");
    let mut messages = first["messages"].as_array().unwrap().clone();
    messages.push(json!({"id": "t1", "role": "tool", "toolCallId": call, "content": "shown"}));
    let mut second = input(&thread, messages);
    second["tools"] = first["tools"].clone();
    let resumed = events(post(&app, &second).await).await;
    assert_eq!(resumed[0]["runId"], second["runId"]);
    assert!(
        resumed.iter().any(|e| e["delta"] == " survived."),
        "{resumed:?}"
    );
    assert_eq!(outcome(&resumed), &json!({"type": "success"}));
    assert_valid_session(&app.log(&session).await, true);
}
