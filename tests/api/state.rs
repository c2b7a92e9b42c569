//! The shared state (issue 29, part 1): the model changes it with `update_state`, a person
//! with `PATCH /api/sessions/{id}/state`, an AG-UI client with its input's `state`. Every
//! change is a `STATE_DELTA` (or `STATE_SNAPSHOT`) in the log, checked before anything is
//! written, never undoing another made at the same time; the next model call sees it;
//! branches fork it with their prefix; share links may hide it.

use std::time::Duration;

use serde_json::{json, Value};
use shared::{Event, EventBody};

use crate::helpers::provider::{openai_app, ProviderServer, Reply};
use crate::helpers::{spawn_app_with, TestApp};

/// The log's state events, as `(seq, type, body)`.
fn state_events(log: &[(u64, Event)]) -> Vec<(u64, &'static str, Value)> {
    log.iter()
        .filter_map(|(seq, event)| match &event.body {
            EventBody::StateSnapshot { snapshot } => Some((*seq, "snapshot", snapshot.clone())),
            EventBody::StateDelta { delta } => Some((*seq, "delta", json!(delta))),
            _ => None,
        })
        .collect()
}

async fn state_of(app: &TestApp, session: &str) -> Value {
    let (status, body) = app.get(&format!("/api/sessions/{session}/state")).await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn patch_state(app: &TestApp, session: &str, delta: Value) -> (u16, Value) {
    app.patch(&format!("/api/sessions/{session}/state"), delta)
        .await
}

/// The system prompt of a request the OpenAI stand-in received.
fn system_prompt(server: &ProviderServer, index: usize) -> String {
    let body = &server.requests()[index].body;
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_and_the_person_change_the_state_and_the_next_call_sees_it() {
    let replies = vec![
        Reply::sse("openai/update_state.sse"),
        Reply::sse("openai/text_after_tool.sse"),
        Reply::sse("openai/text.sse"),
    ];
    let (app, server) = openai_app(replies, &[]).await;
    let (session, mut socket) = app.open_session().await;
    assert_eq!(state_of(&app, &session).await, json!({"state": {}}));
    app.say(&session, "Plan my packing").await;
    socket.until_run_end().await;
    let plan = json!({"plan": [{"step": "Pack", "status": "pending"},
                               {"step": "Book", "status": "pending"}]});
    let log = app.log(&session).await;
    let changes = state_events(&log);
    assert_eq!(changes.len(), 1, "{changes:?}");
    let (delta_seq, kind, delta) = &changes[0];
    assert_eq!(*kind, "delta");
    assert_eq!(
        delta,
        &json!([{"op": "add", "path": "/plan", "value": plan["plan"]}])
    );
    let result = log.iter().find(|(seq, _)| seq == &(delta_seq + 1)).unwrap();
    let EventBody::ToolCallResult { content, .. } = &result.1.body else {
        panic!("the result follows its delta: {:?}", result.1)
    };
    assert_eq!(
        serde_json::from_str::<Value>(content).unwrap(),
        json!({"applied": 1})
    );
    assert_eq!(
        state_of(&app, &session).await,
        json!({"state": plan, "seq": delta_seq})
    );
    assert!(
        !system_prompt(&server, 0).contains("shared state"),
        "an empty state is not sent"
    );
    assert!(
        system_prompt(&server, 1).contains("\"step\": \"Pack\""),
        "{}",
        system_prompt(&server, 1)
    );

    // The person ticks a step off while nothing runs: a short run of its own.
    let (status, body) = patch_state(
        &app,
        &session,
        json!([{"op": "replace", "path": "/plan/0/status", "value": "done"}]),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"]["plan"][0]["status"], "done");
    let edit = socket.until_run_end().await;
    let kinds = crate::helpers::types(&edit);
    assert_eq!(kinds, ["RUN_STARTED", "STATE_DELTA", "RUN_FINISHED"]);
    assert_eq!(body["seq"], edit[1].0);

    // The next run begins with the state, and its model call sees the person's change.
    app.say(&session, "What is left?").await;
    let next = socket.until_run_end().await;
    let snapshot = next
        .iter()
        .find_map(|(_, e)| match &e.body {
            EventBody::StateSnapshot { snapshot } => Some(snapshot.clone()),
            _ => None,
        })
        .expect("a snapshot at the run's start");
    assert_eq!(snapshot["plan"][0]["status"], "done");
    assert!(system_prompt(&server, 2).contains("\"status\": \"done\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_that_does_not_apply_or_breaks_the_schema_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("state.schema.json");
    std::fs::write(
        &schema,
        json!({"type": "object", "properties": {"plan": {"type": "array", "items":
            {"type": "object", "required": ["step"]}}}})
        .to_string(),
    )
    .unwrap();
    let turns = json!([
        {"toolCalls": [{"name": "update_state", "arguments":
            {"patch": [{"op": "add", "path": "/plan", "value": [{"title": "no step"}]}]}}]},
        {"toolCalls": [{"name": "update_state", "arguments": {"patch": []}}]},
        {"text": "Sorry."}
    ]);
    let app = spawn_app_with(turns, &["--state-schema", schema.to_str().unwrap()]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Plan").await;
    socket.until_run_end().await;
    let log = app.log(&session).await;
    assert!(state_events(&log).is_empty(), "the model's bad patches");
    let errors: Vec<Value> = log
        .iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::ToolCallResult { content, .. } => serde_json::from_str(content).ok(),
            _ => None,
        })
        .collect();
    assert!(
        errors[0]["error"].as_str().unwrap().contains("/plan/0"),
        "{errors:?}"
    );
    assert!(
        errors[1]["error"].as_str().unwrap().contains("patch"),
        "{errors:?}"
    );

    let last = log.last().unwrap().0;
    let refusals = [
        (
            json!([{"op": "remove", "path": "/nothing"}]),
            json!({"path": "/nothing", "operation": 0}),
        ),
        (
            json!([{"op": "add", "path": "/a", "value": 1}, {"op": "frob", "path": "/a"}]),
            json!({"path": "/a", "operation": 1}),
        ),
        (
            json!([{"op": "add", "path": "/plan", "value": [{"title": "x"}]}]),
            json!({"path": "/plan/0"}),
        ),
        (
            json!([{"op": "replace", "path": "", "value": [1, 2]}]),
            json!({"path": ""}),
        ),
        (json!([]), json!({"path": ""})),
    ];
    for (delta, details) in refusals {
        let (status, body) = patch_state(&app, &session, delta.clone()).await;
        assert_eq!(status, 422, "{delta}: {body}");
        assert_eq!(body["error"]["code"], "invalid_state", "{body}");
        assert_eq!(body["error"]["details"], details, "{delta}: {body}");
    }
    let (status, body) = patch_state(&app, &session, json!({"op": "add"})).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (400, &json!("bad_request"))
    );
    let (status, _) = patch_state(&app, &uuid::Uuid::new_v4().to_string(), json!([])).await;
    assert_eq!(status, 404);
    assert_eq!(
        app.log(&session).await.last().unwrap().0,
        last,
        "nothing written"
    );
    assert_eq!(state_of(&app, &session).await, json!({"state": {}}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_made_at_once_never_undo_each_other() {
    let app = spawn_app_with(json!([]), &[]).await;
    let session = app.create_session().await;
    let (status, _) = patch_state(
        &app,
        &session,
        json!([{"op": "add", "path": "/n", "value": 0}]),
    )
    .await;
    assert_eq!(status, 200);
    // Eight people each turn 0 into their own number at once: one wins, the others' test
    // fails against the state the winner left, and nothing is logged for them.
    let tries = (1..=8).map(|mine| {
        let (app, session) = (&app, &session);
        async move {
            let delta = json!([{"op": "test", "path": "/n", "value": 0},
                               {"op": "replace", "path": "/n", "value": mine}]);
            (mine, patch_state(app, session, delta).await)
        }
    });
    let outcomes = futures_util::future::join_all(tries).await;
    let winners: Vec<i64> = outcomes
        .iter()
        .filter(|(_, (status, _))| *status == 200)
        .map(|(mine, _)| *mine)
        .collect();
    assert_eq!(winners.len(), 1, "{outcomes:?}");
    for (_, (status, body)) in &outcomes {
        assert!(
            *status == 200 || body["error"]["code"] == "invalid_state",
            "{body}"
        );
    }
    let now = state_of(&app, &session).await;
    assert_eq!(now["state"], json!({"n": winners[0]}));
    let log = app.log(&session).await;
    assert_eq!(
        state_events(&log).len(),
        2,
        "the first add and the winner's change"
    );
    crate::helpers::assert_valid_session(&log, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_s_change_during_a_run_goes_into_it_and_a_question_still_waits_after_one() {
    let slow = Reply::Sse {
        body: crate::helpers::provider::fixture("openai/text.sse"),
        split_every: None,
        pace: Duration::from_millis(150),
        cut_after: None,
    };
    let (app, _server) = openai_app(vec![slow], &[]).await;
    let (session, mut socket) = app.open_session().await;
    let run_id = app.say(&session, "Hello").await;
    socket
        .until(|e| matches!(e.body, EventBody::TextMessageContent { .. }))
        .await;
    let (status, body) = patch_state(
        &app,
        &session,
        json!([{"op": "add", "path": "/during", "value": true}]),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    socket.until_run_end().await;
    let log = app.log(&session).await;
    let runs = log
        .iter()
        .filter(|(_, e)| matches!(e.body, EventBody::RunStarted { .. }))
        .count();
    assert_eq!(runs, 1, "no run of its own");
    let (delta_seq, _, _) = state_events(&log)[0];
    let end = log.iter().find(|(_, e)| e.body.is_run_end()).unwrap().0;
    assert!(delta_seq < end, "inside run {run_id}");
    crate::helpers::assert_valid_session(&log, true);

    let asking = json!([{"toolCalls": [{"name": "request_input",
        "arguments": {"prompt": "Which?", "kind": "text"}}]}]);
    let app = spawn_app_with(asking, &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Ask me").await;
    socket.until_run_end().await;
    let (status, body) = patch_state(
        &app,
        &session,
        json!([{"op": "add", "path": "/x", "value": 1}]),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, summary) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(
        summary["status"], "awaiting_input",
        "the question still waits: {summary}"
    );
    assert_eq!(summary["pendingInterrupts"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_forks_the_state_with_its_prefix_and_a_link_may_hide_it() {
    let turns = json!([
        {"toolCalls": [{"name": "update_state", "arguments":
            {"patch": [{"op": "add", "path": "/a", "value": 1}]}}]},
        {"text": "Set."}
    ]);
    let app = spawn_app_with(turns, &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Set a").await;
    let first = socket.until_run_end().await;
    let fork_at = first.last().unwrap().0;
    patch_state(
        &app,
        &session,
        json!([{"op": "add", "path": "/b", "value": 2}]),
    )
    .await;
    let (status, branch) = app
        .post(
            &format!("/api/sessions/{session}/fork"),
            json!({"atSeq": fork_at}),
        )
        .await;
    assert_eq!(status, 201, "{branch}");
    let branch = branch["id"].as_str().unwrap().to_string();
    assert_eq!(state_of(&app, &branch).await["state"], json!({"a": 1}));
    let (status, _) = patch_state(
        &app,
        &branch,
        json!([{"op": "add", "path": "/c", "value": 3}]),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        state_of(&app, &branch).await["state"],
        json!({"a": 1, "c": 3})
    );
    assert_eq!(
        state_of(&app, &session).await["state"],
        json!({"a": 1, "b": 2})
    );

    for (shown, body) in [(true, json!({})), (false, json!({"state": false}))] {
        let (status, link) = app
            .post(&format!("/api/sessions/{session}/shares"), body)
            .await;
        assert_eq!((status, &link["state"]), (201, &json!(shown)), "{link}");
        let token = link["token"].as_str().unwrap();
        let (_, opened) = app.anonymous().get(&format!("/api/shared/{token}")).await;
        assert_eq!(opened["state"], shown);
        let mut viewer = app.try_shared_socket(token, 0).await.unwrap();
        let (events, _) = viewer.backlog().await;
        let seen = state_events(&events);
        match shown {
            true => assert_eq!(seen.len(), 2, "{seen:?}"),
            false => assert!(seen.is_empty(), "{seen:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agui_client_s_state_is_adopted_and_checked_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("state.schema.json");
    std::fs::write(
        &schema,
        r#"{"type":"object","properties":{"n":{"type":"integer"}}}"#,
    )
    .unwrap();
    let app = spawn_app_with(
        json!([{"text": "Hi."}, {"text": "Again."}]),
        &["--state-schema", schema.to_str().unwrap()],
    )
    .await;
    let thread = uuid::Uuid::new_v4().to_string();
    let input = |state: Value, message: &str| {
        json!({"threadId": thread, "runId": uuid::Uuid::new_v4().to_string(), "state": state,
               "tools": [], "context": [], "forwardedProps": {},
               "messages": [{"id": message, "role": "user", "content": "Hello"}]})
    };
    let post = |body: Value| {
        app.http
            .post(app.url("/api/agui"))
            .header("accept", "text/event-stream")
            .json(&body)
            .send()
    };
    let refused = post(input(json!({"n": "one"}), "m0")).await.unwrap();
    assert_eq!(refused.status(), 422);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_state", "{body}");
    let (_, sessions) = app.get("/api/sessions").await;
    assert_eq!(sessions["sessions"], json!([]), "nothing created");

    let response = post(input(json!({"n": 1}), "m1")).await.unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["tandem-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let stream = response.text().await.unwrap();
    let types: Vec<String> = stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| {
            serde_json::from_str::<Value>(data).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(&types[..2], ["RUN_STARTED", "STATE_SNAPSHOT"], "{stream}");
    assert_eq!(state_of(&app, &session).await["state"], json!({"n": 1}));

    // A client that sends no state (`{}`) gets the server's at the start of its run.
    let response = post(input(json!({}), "m2")).await.unwrap();
    let stream = response.text().await.unwrap();
    assert!(
        stream.contains(r#""type":"STATE_SNAPSHOT","snapshot":{"n":1}"#),
        "{stream}"
    );
    assert_eq!(state_of(&app, &session).await["state"], json!({"n": 1}));
}

/// `{"n": {"n": … 1}}`, `levels` objects deep.
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!(1), |inner, _| json!({ "n": inner }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_nested_deeper_than_the_limit_is_refused_on_every_path_and_one_within_is_kept() {
    let too_deep = nested(125);
    let turns = json!([
        {"toolCalls": [{"name": "update_state", "arguments":
            {"patch": [{"op": "add", "path": "/deep", "value": nested(100)}]}}]},
        {"text": "Could not."},
    ]);
    let app = spawn_app_with(turns, &[]).await;
    let (session, mut socket) = app.open_session().await;

    // A person's change.
    let delta = json!([{"op": "add", "path": "/deep", "value": too_deep}]);
    let (status, body) = patch_state(&app, &session, delta).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (422, &json!("invalid_state")),
        "{body}"
    );
    assert!(
        body["error"]["message"].as_str().unwrap().contains("64"),
        "{body}"
    );
    assert!(
        state_events(&app.log(&session).await).is_empty(),
        "nothing written"
    );

    // The model's.
    app.say(&session, "Nest").await;
    socket.until_run_end().await;
    let log = app.log(&session).await;
    assert!(state_events(&log).is_empty(), "the model's deep patch");
    let refused = log.iter().find_map(|(_, e)| match &e.body {
        EventBody::ToolCallResult { content, .. } => Some(content.clone()),
        _ => None,
    });
    assert!(refused.unwrap().contains("64"), "the model reads why");

    // An AG-UI client's.
    let input = json!({"threadId": uuid::Uuid::new_v4().to_string(), "runId": "r1",
        "state": nested(100), "tools": [], "context": [], "forwardedProps": {},
        "messages": [{"id": "m1", "role": "user", "content": "Hello"}]});
    let refused = app
        .http
        .post(app.url("/api/agui"))
        .header("accept", "text/event-stream")
        .json(&input)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 422);
    let (_, sessions) = app.get("/api/sessions").await;
    assert_eq!(
        sessions["sessions"].as_array().unwrap().len(),
        1,
        "nothing created"
    );

    // What is within the limit is kept, read back whole, and folds into the next state.
    let within = nested(60);
    let delta = json!([{"op": "add", "path": "/deep", "value": within}]);
    let (status, body) = patch_state(&app, &session, delta).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        state_of(&app, &session).await["state"],
        json!({"deep": within})
    );
    assert_eq!(state_events(&app.log(&session).await).len(), 1);
}
