//! An AG-UI input's limits of its own: `context`, `state`, `forwardedProps` and `tools`
//! each have a size (422 beyond, before anything is written), every input that starts or
//! resumes a run takes a message from the per-minute allowance, the bytes it logs count
//! against `--agui-input-bytes-per-minute`, and the log keeps only what a run needs.

use serde_json::{json, Value};
use uuid::Uuid;

use super::{input, outcome, run, user};
use crate::helpers::{spawn_app, spawn_app_with, status_and_json, TestApp};

/// Posts an input that must be refused; returns status and body.
async fn refused(app: &TestApp, input: &Value) -> (u16, Value) {
    status_and_json(app.http.post(app.url("/api/agui")).json(input)).await
}

fn fresh() -> String {
    Uuid::new_v4().to_string()
}

/// A `context` of about `bytes` bytes.
fn context_of(bytes: usize) -> Value {
    json!([{"description": "A long note", "value": "x".repeat(bytes)}])
}

#[tokio::test]
async fn seven_megabytes_of_context_state_or_forwarded_props_are_refused_and_nothing_is_written() {
    let app = spawn_app(json!([{"text": "Hi."}])).await;
    let thread = fresh();
    let (session, _) = run(&app, &input(&thread, vec![user("u1", "Hi")])).await;
    let logged = app.log(&session).await.len();
    let seven_mb = "x".repeat(7_000_000);
    let fields = [
        ("context", json!([{"description": "d", "value": seven_mb}])),
        ("state", json!({"blob": seven_mb})),
        ("forwardedProps", json!({"blob": seven_mb})),
    ];
    for (field, value) in fields {
        for thread in [thread.clone(), fresh()] {
            let mut big = input(&thread, vec![user("u1", "Hi"), user("u2", "More")]);
            big[field] = value.clone();
            let (status, body) = refused(&app, &big).await;
            assert_eq!(
                (status, body["error"]["code"].as_str()),
                (422, Some("invalid_message")),
                "{field}"
            );
            let message = body["error"]["message"].as_str().unwrap();
            let flag = match field {
                "context" => "--max-agui-context-bytes",
                "state" => "--max-agui-state-bytes",
                _ => "--max-agui-forwarded-props-bytes",
            };
            assert!(
                message.contains(&format!("`{field}`")) && message.contains(flag),
                "{message}"
            );
        }
    }
    let tool = |i: usize| json!({"name": format!("tool_{i}"), "description": "d".repeat(4000)});
    let mut many = input(&fresh(), vec![user("u1", "Hi")]);
    many["tools"] = (0..20).map(tool).collect();
    let (status, body) = refused(&app, &many).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("--max-agui-tools-bytes"));

    assert_eq!(
        app.log(&session).await.len(),
        logged,
        "the thread's log as it was"
    );
    let (_, list) = app.get("/api/sessions").await;
    assert_eq!(
        list["sessions"].as_array().unwrap().len(),
        1,
        "no new session"
    );
}

#[tokio::test]
async fn an_input_within_its_limits_runs_and_its_log_keeps_its_state_but_no_forwarded_props() {
    let app = spawn_app_with(json!([{"text": "Noted."}]), &["--models", "model-b"]).await;
    let thread = fresh();
    let mut first = input(&thread, vec![user("u1", "Hi")]);
    first["context"] = context_of(30 * 1024);
    first["state"] = json!({"draft": "s".repeat(60 * 1024)});
    first["forwardedProps"] = json!({"model": "model-b", "theme": "p".repeat(14 * 1024)});
    first["tools"] = json!([{"name": "show_card", "description": "d".repeat(4000)}]);
    first["somethingElse"] = json!({"kept": false});
    let (session, streamed) = run(&app, &first).await;
    assert_eq!(outcome(&streamed)["type"], "success");
    let log = app.log(&session).await;
    let started = serde_json::to_value(&log[0].1).unwrap();
    let recorded = &started["input"];
    assert_eq!(
        recorded, &streamed[0]["input"],
        "the stream sends what the log holds"
    );
    assert_eq!(recorded["forwardedProps"], json!({}), "not logged");
    assert_eq!(recorded["state"], first["state"], "the run adopts it");
    assert_eq!(recorded["context"], first["context"], "the run reads it");
    assert_eq!(recorded["tools"], first["tools"], "the run reads them");
    assert_eq!(recorded["messages"], first["messages"]);
    assert!(recorded.get("somethingElse").is_none(), "{recorded}");
    let picked = serde_json::to_value(&log[1].1).unwrap();
    assert_eq!(
        (&picked["name"], &picked["value"]),
        (
            &json!("tandem.model_selected"),
            &json!({"model": "model-b"})
        ),
        "the model picked in forwardedProps is recorded as the run's"
    );
}

#[tokio::test]
async fn the_input_byte_allowance_refuses_with_429_once_a_minutes_bytes_are_logged() {
    let app = spawn_app_with(
        json!([{"text": "Noted."}]),
        &["--agui-input-bytes-per-minute", "50000"],
    )
    .await;
    let mut never = input(&fresh(), vec![user("u1", "Hi")]);
    never["context"] = context_of(32 * 1024 - 100);
    let tool = |name: &str| json!({"name": name, "description": "d".repeat(4000)});
    never["tools"] = ["a", "b", "c", "e", "f", "g"]
        .map(tool)
        .into_iter()
        .collect();
    let (status, body) = refused(&app, &never).await;
    assert_eq!(status, 422, "more than a minute's allowance: {body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("--agui-input-bytes-per-minute"));

    let noted = |text: &str| {
        let mut next = input(&fresh(), vec![user("u1", text)]);
        next["context"] = context_of(20 * 1024);
        next
    };
    for text in ["One", "Two"] {
        let (_, streamed) = run(&app, &noted(text)).await;
        assert_eq!(outcome(&streamed)["type"], "success");
    }
    let response = app
        .http
        .post(app.url("/api/agui"))
        .json(&noted("Three"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    assert!(response.headers().contains_key("retry-after"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limited", "{body}");
    let (_, list) = app.get("/api/sessions").await;
    assert_eq!(list["sessions"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn an_input_that_resumes_a_run_takes_a_message_from_the_allowance() {
    let question = json!({"toolCalls": [{"name": "request_input",
        "arguments": {"prompt": "Your name?", "kind": "text"}}]});
    let app = spawn_app_with(
        json!([question, {"text": "Thanks."}]),
        &["--messages-per-minute", "2"],
    )
    .await;
    let first = input(&fresh(), vec![user("u1", "Hi")]);
    let (_, paused) = run(&app, &first).await;
    let interrupt = outcome(&paused)["interrupts"][0]["id"].clone();
    let mut resume = first.clone();
    resume["runId"] = json!(fresh());
    resume["resume"] = json!([{"interruptId": interrupt, "status": "resolved",
                               "payload": {"text": "Ada"}}]);
    let (_, resumed) = run(&app, &resume).await;
    assert_eq!(outcome(&resumed)["type"], "success");
    let (status, body) = refused(&app, &input(&fresh(), vec![user("u1", "Hi")])).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (429, Some("rate_limited")),
        "a message and a resume took this minute's two"
    );
}
