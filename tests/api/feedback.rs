//! Feedback on answers (issue 29, part 3): a person rates an answer up or down with an
//! optional comment, changes their mind, and the rating is in the log (`CUSTOM
//! tandem.feedback`, as a short run of its own between runs, leaving a paused session
//! paused), in the operator's list (`GET /api/feedback`, `tandem feedback`), in
//! `/metrics`, in the Markdown export, and to a share link without its comment; other
//! users' sessions, unknown runs and runs that made no model call are 404.

use serde_json::{json, Value};
use shared::{Event, EventBody};

use crate::helpers::{spawn_app_with, spawn_app_with_users, TestApp};

fn feedback_path(session: &str, run: &str) -> String {
    format!("/api/sessions/{session}/runs/{run}/feedback")
}

/// The log's `tandem.feedback` values.
fn ratings(log: &[(u64, Event)]) -> Vec<Value> {
    log.iter()
        .filter_map(|(_, event)| match &event.body {
            EventBody::Custom { name, value } if name == "tandem.feedback" => Some(value.clone()),
            _ => None,
        })
        .collect()
}

async fn answered(app: &TestApp) -> (String, String) {
    let (session, mut socket) = app.open_session().await;
    let run = app.say(&session, "Hello").await;
    socket.until_run_end().await;
    (session, run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rating_is_logged_listed_counted_exported_and_changeable() {
    let app = spawn_app_with(json!([{"text": "Hi there, how can I help?"}]), &[]).await;
    let (session, run) = answered(&app).await;
    let path = feedback_path(&session, &run);
    let (status, body) = app.post(&path, json!({"rating": "up"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"runId": run, "rating": "up", "user": "local"}));
    let log = app.log(&session).await;
    let tail: Vec<&str> = log[log.len() - 3..]
        .iter()
        .map(|(_, e)| e.type_name())
        .collect();
    assert_eq!(
        tail,
        ["RUN_STARTED", "CUSTOM", "RUN_FINISHED"],
        "a short run of its own"
    );
    crate::helpers::assert_valid_session(&log, true);

    let comment = "It forgot the attachment.";
    let (status, _) = app
        .post(
            &path,
            json!({"rating": "down", "comment": format!("  {comment} ")}),
        )
        .await;
    assert_eq!(status, 200);
    let log = app.log(&session).await;
    assert_eq!(
        ratings(&log).last().unwrap(),
        &json!({"runId": run, "rating": "down", "comment": comment, "user": "local"})
    );
    let (_, summary) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(summary["status"], "idle");

    // Under `--auth none` the local user is the operator.
    let (status, listed) = app.get("/api/feedback").await;
    assert_eq!(status, 200, "{listed}");
    let listed = listed["feedback"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 1, "one per user and answer: {listed:?}");
    assert_eq!(
        (
            &listed[0]["rating"],
            &listed[0]["comment"],
            &listed[0]["runId"],
            &listed[0]["user"]
        ),
        (
            &json!("down"),
            &json!(comment),
            &json!(run),
            &json!("local")
        )
    );
    assert_eq!(listed[0]["sessionTitle"], "Hello");
    let (_, ups) = app.get("/api/feedback?rating=up").await;
    assert_eq!(ups["feedback"], json!([]));
    let future = listed[0]["updatedAt"].as_i64().unwrap() + 1;
    let (_, later) = app.get(&format!("/api/feedback?since={future}")).await;
    assert_eq!(later["feedback"], json!([]));
    let (status, _) = app.get("/api/feedback?limit=0").await;
    assert_eq!(status, 400);

    let metrics = app.metrics().await;
    assert!(
        metrics.contains("tandem_feedback{rating=\"down\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("tandem_feedback{rating=\"up\"} 0"),
        "{metrics}"
    );

    let export = app
        .http
        .get(app.url(&format!("/api/sessions/{session}/export?format=markdown")))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        export.contains(&format!(
            "- 👎 Bad answer (local): “Hi there, how can I help?…” — {comment}"
        )),
        "{export}"
    );

    let (_, link) = app
        .post(&format!("/api/sessions/{session}/shares"), json!({}))
        .await;
    let mut viewer = app
        .try_shared_socket(link["token"].as_str().unwrap(), 0)
        .await
        .unwrap();
    let (seen, _) = viewer.backlog().await;
    assert_eq!(
        ratings(&seen).last().unwrap(),
        &json!({"runId": run, "rating": "down"}),
        "never the comment or the name"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rating_while_a_question_waits_leaves_it_waiting() {
    let turns = json!([
        {"text": "Let me ask.", "toolCalls": [{"name": "request_input",
            "arguments": {"prompt": "Your name?", "kind": "text"}}]},
        {"text": "Thanks, Ada."}
    ]);
    let app = spawn_app_with(turns, &[]).await;
    let (session, mut socket) = app.open_session().await;
    let run = app.say(&session, "Ask me").await;
    let paused = socket.until_run_end().await;
    let interrupt = crate::helpers::socket::interrupt_id(&paused);
    let (status, body) = app
        .post(&feedback_path(&session, &run), json!({"rating": "up"}))
        .await;
    assert_eq!(status, 200, "{body}");
    // The shared state may change too while the question waits.
    let (status, body) = app
        .patch(
            &format!("/api/sessions/{session}/state"),
            json!([{"op": "add", "path": "/x", "value": 1}]),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (_, summary) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(summary["status"], "awaiting_input", "{summary}");
    assert_eq!(summary["pendingInterrupts"].as_array().unwrap().len(), 1);
    let answer = json!({"status": "resolved", "payload": {"text": "Ada"}});
    let (status, accepted) = app
        .post(
            &format!("/api/sessions/{session}/interrupts/{interrupt}"),
            answer,
        )
        .await;
    assert_eq!(status, 202);
    let resumed_run = accepted["runId"].as_str().unwrap().to_string();
    // The notes' own short runs pass by first.
    let resumed = socket
        .until(
            |e| matches!(&e.body, EventBody::RunFinished { run_id, .. } if *run_id == resumed_run),
        )
        .await;
    let text: String = resumed
        .iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::TextMessageContent { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(text.contains("Thanks, Ada."), "{text}");
    crate::helpers::assert_valid_session(&app.log(&session).await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_answers_of_one_s_own_sessions_are_rated_and_only_operators_list() {
    let apps = spawn_app_with_users(
        json!([{"text": "One."}, {"text": "Two."}]),
        &["--operators", "olga"],
        &["ada", "bob", "olga"],
    )
    .await;
    let (ada, bob, olga) = (&apps[0], &apps[1], &apps[2]);
    let (session, run) = answered(ada).await;
    let path = feedback_path(&session, &run);
    let (status, body) = bob.post(&path, json!({"rating": "down"})).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("session_not_found"))
    );
    for unknown in ["run_nope", &"r".repeat(300)] {
        let (status, body) = ada
            .post(&feedback_path(&session, unknown), json!({"rating": "up"}))
            .await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (404, &json!("not_found")),
            "{body}"
        );
    }
    // A person's change of the state is a run of its own that made no model call.
    ada.patch(
        &format!("/api/sessions/{session}/state"),
        json!([{"op": "add", "path": "/a", "value": 1}]),
    )
    .await;
    let log = ada.log(&session).await;
    let edit_run = log
        .iter()
        .rev()
        .find_map(|(_, e)| match &e.body {
            EventBody::RunStarted { run_id, .. } => Some(run_id.clone()),
            _ => None,
        })
        .unwrap();
    let (status, _) = ada
        .post(&feedback_path(&session, &edit_run), json!({"rating": "up"}))
        .await;
    assert_eq!(status, 404, "no answer to rate");
    let long = "x".repeat(2001);
    let (status, body) = ada
        .post(&path, json!({"rating": "up", "comment": long}))
        .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (422, &json!("invalid_message"))
    );
    for bad in [
        json!({"rating": "sideways"}),
        json!({}),
        json!({"rating": "up", "x": 1}),
    ] {
        let (status, _) = ada.post(&path, bad.clone()).await;
        assert_eq!(status, 400, "{bad}");
    }
    assert!(
        ratings(&ada.log(&session).await).is_empty(),
        "nothing written"
    );

    let (status, _) = ada
        .post(&path, json!({"rating": "up", "comment": "Spot on"}))
        .await;
    assert_eq!(status, 200);
    let (status, body) = ada.get("/api/feedback").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (403, &json!("not_an_operator"))
    );
    let (status, body) = olga.get("/api/feedback").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["feedback"][0]["user"], "ada");
    assert_eq!(body["feedback"][0]["comment"], "Spot on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rating_is_no_activity_of_the_conversation_the_list_keeps_its_order_and_time() {
    let turns = json!([{"text": "First."}, {"text": "Second."}, {"text": "Third."}]);
    let app = spawn_app_with(turns, &[]).await;
    let (older, run) = answered(&app).await;
    let (newer, _) = answered(&app).await;
    let listed = |list: &Value| -> Vec<(String, i64)> {
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["id"].as_str().unwrap().to_string(),
                    s["updatedAt"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    let before = listed(&app.get("/api/sessions").await.1);
    assert_eq!(before[0].0, newer);
    let (status, body) = app
        .post(
            &feedback_path(&older, &run),
            json!({"rating": "down", "comment": "meh"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        listed(&app.get("/api/sessions").await.1),
        before,
        "neither the order nor the times moved"
    );
    // A message is activity: the older conversation comes first again.
    let mut socket = app.socket(&older, 0).await;
    socket.backlog().await;
    app.say(&older, "more").await;
    socket.until_run_end().await;
    let after = listed(&app.get("/api/sessions").await.1);
    assert_eq!(after[0].0, older);
    assert!(after[0].1 > before[1].1);
}
