//! Pause → answer → resume for each input kind, and every way an answer can be wrong.

use serde_json::{json, Value};
use shared::{EventBody, Outcome};

use crate::helpers::socket::interrupt_id;
use crate::helpers::{assert_valid_session, spawn_app, types, TestApp};

fn ask(kind: &str, extra: Value) -> Value {
    let mut arguments = json!({"prompt": "Question?", "kind": kind});
    arguments
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    json!({"text": "I need to ask.", "toolCalls": [{"name": "request_input", "arguments": arguments}]})
}

/// Runs one pause and answer with `payload`; returns the resumed run's events.
async fn pause_and_answer(
    kind: &str,
    extra: Value,
    payload: Value,
) -> (TestApp, String, Vec<(u64, shared::Event)>) {
    let app = spawn_app(json!([ask(kind, extra), {"text": "Thanks."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "start").await;
    let paused = socket.until_run_end().await;
    let interrupt = match &paused.last().unwrap().1.body {
        EventBody::RunFinished {
            outcome: Some(Outcome::Interrupt { interrupts }),
            ..
        } => interrupts[0].clone(),
        other => panic!("expected an interrupt, got {other:?}"),
    };
    assert_eq!(interrupt.reason, "input_required");
    assert_eq!(interrupt.metadata.as_ref().unwrap()["kind"], kind);
    let (_, detail) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(detail["status"], "awaiting_input");
    assert_eq!(detail["pendingInterrupts"][0]["id"], interrupt.id.as_str());
    socket
        .send(json!({"kind": "resume", "interruptId": interrupt.id, "status": "resolved", "payload": payload}))
        .await;
    let resumed = socket.until_run_end().await;
    assert_eq!(types(&resumed)[..2], ["RUN_STARTED", "TOOL_CALL_RESULT"]);
    match &resumed[1].1.body {
        EventBody::ToolCallResult {
            tool_call_id,
            content,
            ..
        } => {
            assert_eq!(Some(tool_call_id), interrupt.tool_call_id.as_ref());
            let content: Value = serde_json::from_str(content).unwrap();
            assert_eq!(content, json!({"status": "resolved", "payload": payload}));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(resumed.last().unwrap().1.type_name(), "RUN_FINISHED");
    let log = app.log(&session).await;
    assert_valid_session(&log, true);
    (app, session, resumed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_questions_pause_and_resume() {
    pause_and_answer("text", json!({}), json!({"text": "Ada"})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn choice_questions_pause_and_resume() {
    pause_and_answer(
        "choice",
        json!({"choices": ["Lisbon", "Kyoto"]}),
        json!({"choice": "Kyoto"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirm_questions_pause_and_resume() {
    pause_and_answer(
        "confirm",
        json!({}),
        json!({"approved": false, "comment": "not now"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_questions_pause_and_resume() {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]});
    pause_and_answer(
        "form",
        json!({"schema": schema}),
        json!({"name": "Ada", "age": 36}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_conflicting_unknown_and_invalid_answers() {
    let app =
        spawn_app(json!([ask("choice", json!({"choices": ["A", "B"]})), {"text": "Done."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "start").await;
    let id = interrupt_id(&socket.until_run_end().await);
    let path = format!("/api/sessions/{session}/interrupts/{id}");
    let before = app.log(&session).await;

    let (status, body) = app
        .post(
            &path,
            json!({"status": "resolved", "payload": {"choice": "C"}}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_payload")),
        "{body}"
    );
    let (status, body) = app.post(&path, json!({"status": "resolved"})).await;
    assert_eq!(status, 422, "{body}");
    let (status, body) = app
        .post(
            &format!("/api/sessions/{session}/interrupts/int_nope"),
            json!({"status": "resolved", "payload": {}}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("interrupt_not_found"))
    );
    assert_eq!(
        app.log(&session).await,
        before,
        "refused answers change nothing"
    );

    let (status, first) = app
        .post(
            &path,
            json!({"status": "resolved", "payload": {"choice": "A"}}),
        )
        .await;
    assert_eq!(status, 202, "{first}");
    socket.until_run_end().await;
    let after_answer = app.log(&session).await;
    let (status, again) = app
        .post(
            &path,
            json!({"status": "resolved", "payload": {"choice": "A"}}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(again["runId"], first["runId"]);
    assert_eq!(again["duplicate"], true);
    let (status, conflict) = app
        .post(
            &path,
            json!({"status": "resolved", "payload": {"choice": "B"}}),
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(conflict["error"]["code"], "interrupt_already_answered");
    assert_eq!(
        conflict["error"]["details"]["response"]["payload"]["choice"],
        "A"
    );
    assert_eq!(
        app.log(&session).await,
        after_answer,
        "repeats and conflicts change nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_question_resumes_with_a_cancelled_result() {
    let app = spawn_app(json!([ask("text", json!({})), {"text": "Fine."}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "start").await;
    let id = interrupt_id(&socket.until_run_end().await);
    socket
        .send(json!({"kind": "resume", "interruptId": id, "status": "cancelled"}))
        .await;
    let resumed = socket.until_run_end().await;
    match &resumed[1].1.body {
        EventBody::ToolCallResult { content, .. } => {
            assert_eq!(content, r#"{"status":"cancelled"}"#)
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_while_waiting_cancels_the_question_and_finishes_cancelled() {
    let app = spawn_app(json!([ask("text", json!({}))])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "start").await;
    socket.until_run_end().await;
    let (status, _) = app
        .post(&format!("/api/sessions/{session}/cancel"), json!({}))
        .await;
    assert_eq!(status, 202);
    let events = socket.until_run_end().await;
    assert_eq!(
        types(&events),
        ["RUN_STARTED", "TOOL_CALL_RESULT", "RUN_FINISHED"]
    );
    let (_, detail) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(detail["status"], "idle");
    assert_eq!(detail["pendingInterrupts"], json!([]));
    let (status, body) = app
        .post(&format!("/api/sessions/{session}/cancel"), json!({}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("idle"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_that_say_reject_are_refused_while_input_is_awaited() {
    let app = spawn_app(json!([ask("text", json!({}))])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "start").await;
    socket.until_run_end().await;
    let (status, body) = app
        .post(
            &format!("/api/sessions/{session}/messages"),
            json!({"text": "hello?", "whileRunning": "reject"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("awaiting_input"))
    );
}
