//! AG-UI over HTTP (`POST /api/agui`): a `RunAgentInput` in, the run's events out as SSE,
//! exactly as the log holds them. The real `@ag-ui/client` drives the same route in
//! `tests/conformance/http_agent.test.mjs`.

mod answers;
mod client_tools;
mod isolation;
mod limits;

use serde_json::{json, Value};
use uuid::Uuid;

use crate::helpers::{assert_valid_session, spawn_app, spawn_app_with, TestApp, UNLIMITED};

/// Posts an input; returns the response (not yet read).
async fn post(app: &TestApp, input: &Value) -> reqwest::Response {
    app.http
        .post(app.url("/api/agui"))
        .header("accept", "text/event-stream")
        .json(input)
        .send()
        .await
        .unwrap()
}

/// The session a response's `Tandem-Session-Id` names.
fn session_of(response: &reqwest::Response) -> String {
    let header = &response.headers()["tandem-session-id"];
    header.to_str().unwrap().to_string()
}

/// Posts an input and reads the whole stream; returns the thread's session and the
/// events.
async fn run(app: &TestApp, input: &Value) -> (String, Vec<Value>) {
    let response = post(app, input).await;
    let session = session_of(&response);
    (session, events(response).await)
}

/// The events of an SSE body (keep-alive comments left out).
async fn events(response: reqwest::Response) -> Vec<Value> {
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    let body = response.text().await.unwrap();
    assert!(
        body.ends_with("\n\n"),
        "frames end with a blank line: {body:?}"
    );
    body.split("\n\n")
        .filter(|frame| !frame.is_empty() && !frame.starts_with(':'))
        .map(|frame| {
            let json = frame.strip_prefix("data: ").expect("a data frame");
            serde_json::from_str(json).unwrap()
        })
        .collect()
}

/// The log's events (as JSON) of `session` from seq `from` on, as a stream of `thread`
/// sends them: its `RUN_STARTED` and `RUN_FINISHED` carry the client's `threadId`.
async fn logged(app: &TestApp, session: &str, thread: &str, from: usize) -> Vec<Value> {
    let log = app.log(session).await;
    assert_valid_session(&log, true);
    log.iter()
        .skip(from)
        .map(|(_, event)| {
            let mut event = serde_json::to_value(event).unwrap();
            if matches!(event["type"].as_str(), Some("RUN_STARTED" | "RUN_FINISHED")) {
                assert_eq!(event["threadId"], session, "the log keeps the session's id");
                event["threadId"] = json!(thread);
            }
            event
        })
        .collect()
}

fn user(id: &str, text: &str) -> Value {
    json!({"id": id, "role": "user", "content": text})
}

fn input(thread: &str, messages: Vec<Value>) -> Value {
    json!({"threadId": thread, "runId": Uuid::new_v4().to_string(), "state": {},
           "messages": messages, "tools": [], "context": [], "forwardedProps": {}})
}

fn outcome(events: &[Value]) -> &Value {
    let last = events.last().unwrap();
    assert_eq!(last["type"], "RUN_FINISHED", "{last}");
    &last["outcome"]
}

#[tokio::test]
async fn a_text_run_streams_what_the_log_holds_and_a_repeat_streams_it_again() {
    let app = spawn_app(json!([{"reasoning": "Easy.", "text": "Hello from the log."}])).await;
    let thread = Uuid::new_v4().to_string();
    let first = input(&thread, vec![user("u1", "Hi")]);
    let (session, streamed) = run(&app, &first).await;
    assert_ne!(
        session, thread,
        "a new thread's session has an id of its own"
    );
    assert_eq!(streamed[0]["type"], "RUN_STARTED");
    assert_eq!(
        streamed[0]["runId"], first["runId"],
        "the client's runId is the run's id"
    );
    assert_eq!(outcome(&streamed)["type"], "success");
    assert_eq!(
        (
            &streamed[0]["threadId"],
            &streamed.last().unwrap()["threadId"]
        ),
        (&json!(thread), &json!(thread)),
        "the stream carries the client's threadId"
    );
    assert_eq!(
        streamed,
        logged(&app, &session, &thread, 0).await,
        "same events, ids, order"
    );

    let recorded = &streamed[0]["input"];
    assert_eq!(
        recorded["messages"],
        json!([user("u1", "Hi")]),
        "only new messages"
    );
    assert_eq!(recorded["threadId"], thread.as_str());
    assert!(
        !streamed.iter().any(|e| e["role"] == "user"),
        "the client's message travels in RUN_STARTED.input only (it holds it already)"
    );
    let (status, summary) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!((status, &summary["title"]), (200, &json!("Hi")));

    let (same, again) = run(&app, &first).await;
    assert_eq!(
        (same, again),
        (session.clone(), streamed.clone()),
        "a repeated input streams the run it started"
    );
    assert_eq!(
        app.log(&session).await.len(),
        streamed.len(),
        "and starts nothing"
    );

    let mut known = first["messages"].as_array().unwrap().clone();
    let reply = streamed
        .iter()
        .find(|e| e["type"] == "TEXT_MESSAGE_START" && e["role"] == "assistant")
        .unwrap();
    known.push(
        json!({"id": reply["messageId"], "role": "assistant", "content": "Hello from the log."}),
    );
    let (status, body) = crate::helpers::status_and_json(
        app.http
            .post(app.url("/api/agui"))
            .json(&input(&thread, known)),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("nothing to run"));
}

#[tokio::test]
async fn resume_answers_an_interrupt_like_the_rest_route() {
    let question = json!({"toolCalls": [{"name": "request_input",
        "arguments": {"prompt": "Your name?", "kind": "text"}}]});
    let app = spawn_app(json!([question, {"text": "Thanks, Ada."}])).await;
    let thread = Uuid::new_v4().to_string();
    let first = input(&thread, vec![user("u1", "Hi")]);
    let paused = events(post(&app, &first).await).await;
    let interrupts = &outcome(&paused)["interrupts"];
    let interrupt = interrupts[0]["id"].as_str().unwrap().to_string();

    let (status, body) = crate::helpers::status_and_json(app.http.post(app.url("/api/agui")).json(
        &input(&thread, vec![user("u1", "Hi"), user("u2", "Ignore it")]),
    ))
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("awaiting_input"))
    );

    let answer = |payload: Value| {
        let mut resume = input(&thread, vec![user("u1", "Hi")]);
        resume["resume"] =
            json!([{"interruptId": interrupt, "status": "resolved", "payload": payload}]);
        resume
    };
    let resumed = events(post(&app, &answer(json!({"text": "Ada"}))).await).await;
    assert_eq!(resumed[1]["type"], "TOOL_CALL_RESULT");
    assert_eq!(outcome(&resumed)["type"], "success");
    let again = events(post(&app, &answer(json!({"text": "Ada"}))).await).await;
    assert_eq!(
        again, resumed,
        "the same answer again streams the run it started"
    );
    let (status, body) = crate::helpers::status_and_json(
        app.http
            .post(app.url("/api/agui"))
            .json(&answer(json!({"text": "Bob"}))),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("interrupt_already_answered"))
    );
    let mut unknown = answer(json!({"text": "Ada"}));
    unknown["resume"][0]["interruptId"] = json!("int_nope");
    let (status, _) =
        crate::helpers::status_and_json(app.http.post(app.url("/api/agui")).json(&unknown)).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_run_outlives_its_client_and_a_second_input_is_told_where_to_watch() {
    let words: Vec<String> = (0..300).map(|i| format!("w{i}")).collect();
    let mut extra = UNLIMITED.to_vec();
    extra.extend(["--token-delay-ms", "10"]);
    let app = spawn_app_with(
        json!([{"text": words.join(" ")}, {"text": "Next."}]),
        &extra,
    )
    .await;
    let thread = Uuid::new_v4().to_string();
    let mut response = post(&app, &input(&thread, vec![user("u1", "Talk")])).await;
    let session = session_of(&response);
    let first = response
        .chunk()
        .await
        .unwrap()
        .expect("the run's first events");
    assert!(String::from_utf8_lossy(&first).starts_with("data: {\"type\":\"RUN_STARTED\""));
    drop(response);

    let mut second = input(&thread, vec![user("u1", "Talk"), user("u2", "More")]);
    second["forwardedProps"] = json!({"whileRunning": "reject"});
    let (status, body) =
        crate::helpers::status_and_json(app.http.post(app.url("/api/agui")).json(&second)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("run_active")),
        "{body}"
    );
    let watch = body["error"]["details"]["watch"].as_str().unwrap();
    assert_eq!(
        watch,
        format!("/api/sessions/{session}/ws?after=0"),
        "the hint names the thread's session"
    );

    let mut socket = app.socket(&session, 0).await;
    let run = socket.until_run_end().await;
    assert_eq!(
        run.last().unwrap().1.type_name(),
        "RUN_FINISHED",
        "the run went on"
    );
    let text: String = run
        .iter()
        .filter_map(|(_, e)| match &e.body {
            shared::EventBody::TextMessageContent { message_id, delta } if message_id != "u1" => {
                Some(delta.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        text,
        words.join(" "),
        "every token, though nobody read the stream"
    );
}

#[tokio::test]
async fn an_input_during_a_run_waits_its_turn_and_streams_its_own_run() {
    let words: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
    let mut extra = UNLIMITED.to_vec();
    extra.extend(["--token-delay-ms", "10"]);
    let app = spawn_app_with(
        json!([{"text": words.join(" ")}, {"text": "Next."}]),
        &extra,
    )
    .await;
    let thread = Uuid::new_v4().to_string();
    let mut response = post(&app, &input(&thread, vec![user("u1", "Talk")])).await;
    response
        .chunk()
        .await
        .unwrap()
        .expect("the first run began");

    let second = input(&thread, vec![user("u1", "Talk"), user("u2", "More")]);
    let queued = events(post(&app, &second).await).await;
    assert_eq!(queued[0]["type"], "RUN_STARTED", "{queued:?}");
    assert_eq!(
        queued[0]["runId"], second["runId"],
        "the stream is the run the input started, in its turn"
    );
    assert_eq!(outcome(&queued)["type"], "success");
    let text: String = queued
        .iter()
        .filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Next.");
    let first = events(response).await;
    assert_eq!(
        outcome(&first)["type"],
        "success",
        "the first run finished before the second began"
    );

    let mut bad = input(&thread, vec![user("u1", "Talk"), user("u3", "Again")]);
    bad["forwardedProps"] = json!({"whileRunning": "later"});
    let (status, body) =
        crate::helpers::status_and_json(app.http.post(app.url("/api/agui")).json(&bad)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_message")),
        "{body}"
    );
}

#[tokio::test]
async fn a_thread_id_that_is_not_a_uuid_and_a_client_that_takes_no_stream_are_refused() {
    let app = spawn_app(json!([{"text": "Hi."}])).await;
    let (status, body) = crate::helpers::status_and_json(
        app.http
            .post(app.url("/api/agui"))
            .json(&input("thread-1", vec![user("u1", "Hi")])),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("bad_request"))
    );
    let (status, body) = crate::helpers::status_and_json(
        app.http
            .post(app.url("/api/agui"))
            .header("accept", "application/json")
            .json(&input(&Uuid::new_v4().to_string(), vec![user("u1", "Hi")])),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (406, Some("not_acceptable"))
    );
}

#[tokio::test]
async fn a_thread_whose_id_is_a_session_of_the_caller_runs_in_that_session() {
    let app = spawn_app(json!([{"text": "In the session."}])).await;
    let made = app.create_session().await;
    let (session, streamed) = run(&app, &input(&made, vec![user("u1", "Hi")])).await;
    assert_eq!(session, made);
    assert_eq!(streamed[0]["threadId"], made.as_str());
    assert_eq!(streamed, logged(&app, &made, &made, 0).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_deleted_while_branches_read_it_asks_for_a_fresh_thread() {
    let app = spawn_app(json!([{"text": "Hi."}, {"text": "Again."}])).await;
    let thread = Uuid::new_v4().to_string();
    let (session, events) = run(&app, &input(&thread, vec![user("u1", "Hi")])).await;
    let end = app.log(&session).await.len() as u64;
    assert_eq!(events.len() as u64, end);
    let path = format!("/api/sessions/{session}/fork");
    assert_eq!(app.post(&path, json!({"atSeq": end})).await.0, 201);
    assert_eq!(app.delete_session(&session).await, 204);
    // The thread's session is kept, hidden, for its branch: the thread cannot start again.
    let again = input(&thread, vec![user("u2", "Once more")]);
    let response = post(&app, &again).await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("fresh threadId"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_message_is_edited_into_a_branch_by_its_id() {
    let app = spawn_app(json!([{"text": "Hi."}, {"text": "Again."}])).await;
    let thread = Uuid::new_v4().to_string();
    let (session, _) = run(&app, &input(&thread, vec![user("u1", "Hello")])).await;
    let path = format!("/api/sessions/{session}/messages/u1/edit");
    let (status, branch) = app.post(&path, json!({"text": "Hello there"})).await;
    assert_eq!(status, 201, "{branch}");
    assert_eq!(
        branch["forkSeq"], 0,
        "the client's first message started the thread"
    );
    let id = branch["id"].as_str().unwrap();
    let mut socket = app.socket(id, 0).await;
    let run = socket.until_run_end().await;
    let text: String = run
        .iter()
        .filter_map(|(_, e)| match &e.body {
            shared::EventBody::TextMessageContent { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        text.contains("Hello there") && text.contains("Hi."),
        "{text}"
    );
}
