//! The REST surface: shapes, validation and error codes.

use serde_json::json;

use crate::helpers::spawn_app;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_can_be_created_listed_read_and_deleted() {
    let app = spawn_app(json!([])).await;
    let (status, health) = app.get("/healthz").await;
    assert_eq!((status, health["status"].as_str()), (200, Some("ok")));
    let (_, info) = app.get("/api/info").await;
    assert_eq!(info["engine"], "script");
    let empty_body = app
        .http
        .post(app.url("/api/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(empty_body.status(), 201, "an empty body is allowed");
    let (status, created) = app.post("/api/sessions", json!({"title": "Trip"})).await;
    assert_eq!(status, 201);
    assert_eq!(created["title"], "Trip");
    assert_eq!(created["status"], "idle");
    assert_eq!(created["lastSeq"], 0);
    let id = created["id"].as_str().unwrap();
    let (_, list) = app.get("/api/sessions").await;
    assert_eq!(list["sessions"].as_array().unwrap().len(), 2);
    let (status, detail) = app.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(detail["pendingInterrupts"], json!([]));
    assert_eq!(app.delete_session(id).await, 204);
    let (status, body) = app.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("session_not_found"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_clear_json_errors() {
    let app = spawn_app(json!([])).await;
    let session = app.create_session().await;
    let messages = format!("/api/sessions/{session}/messages");
    let cases = [
        (json!({"text": ""}), 422, "invalid_message"),
        (json!({"text": "   "}), 422, "invalid_message"),
        (json!({"text": 5}), 400, "bad_request"),
        (json!({"txt": "hi"}), 400, "bad_request"),
        (json!({"text": "x".repeat(40_000)}), 422, "invalid_message"),
        (
            json!({"text": "hi", "clientMessageId": ""}),
            422,
            "invalid_message",
        ),
    ];
    for (body, status, code) in cases {
        let (got, reply) = app.post(&messages, body.clone()).await;
        assert_eq!(
            (got, reply["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}"
        );
        assert!(reply["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
    }
    let raw = app
        .http
        .post(app.url(&messages))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 400);
    // A body a cross-site form or `text/plain` fetch could send is refused unread.
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let mut request = app.http.post(app.url(&messages)).body(r#"{"text":"hi"}"#);
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let reply = request.send().await.unwrap();
        assert_eq!(reply.status(), 415, "{content_type:?}");
        let body: serde_json::Value = reply.json().await.unwrap();
        assert_eq!(body["error"]["code"], "unsupported_media_type");
    }
    let huge = app
        .http
        .post(app.url(&messages))
        .body(vec![b' '; 70_000])
        .send()
        .await
        .unwrap();
    assert_eq!(huge.status(), 413);
    assert_eq!(
        huge.json::<serde_json::Value>().await.unwrap()["error"]["code"],
        "payload_too_large"
    );
    let (status, body) = app.get("/api/sessions/not-a-uuid").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("bad_request"))
    );
    let unknown = uuid::Uuid::now_v7();
    let (status, _) = app
        .post(
            &format!("/api/sessions/{unknown}/messages"),
            json!({"text": "hi"}),
        )
        .await;
    assert_eq!(status, 404);
    let (status, _) = app
        .get(&format!("/api/sessions/{session}/events?after=-1"))
        .await;
    assert_eq!(status, 400);
    let (status, _) = app
        .get(&format!("/api/sessions/{session}/events?limit=0"))
        .await;
    assert_eq!(status, 400);
    let (status, body) = app.get("/api/nothing-here").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found"))
    );
    let (_, log) = app.get(&format!("/api/sessions/{session}/events")).await;
    assert_eq!(log["events"], json!([]), "nothing was logged by bad input");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_client_message_id_is_one_message() {
    let app = spawn_app(json!([{"text": "once"}])).await;
    let (session, mut socket) = app.open_session().await;
    let path = format!("/api/sessions/{session}/messages");
    let (status, first) = app
        .post(&path, json!({"text": "hi", "clientMessageId": "c-1"}))
        .await;
    assert_eq!(status, 202);
    socket.until_run_end().await;
    let (status, again) = app
        .post(&path, json!({"text": "hi", "clientMessageId": "c-1"}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(again["runId"], first["runId"]);
    let runs = app
        .log(&session)
        .await
        .iter()
        .filter(|(_, e)| e.type_name() == "RUN_STARTED")
        .count();
    assert_eq!(runs, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_message_during_a_run_is_refused_with_run_active_under_while_running_reject() {
    let app = crate::helpers::spawn_app_with(
        json!([{"text": "slow ".repeat(200)}]),
        &["--token-delay-ms", "5", "--while-running", "reject"],
    )
    .await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "go").await;
    socket.until(|e| e.type_name() == "STEP_STARTED").await;
    let (status, body) = app
        .post(
            &format!("/api/sessions/{session}/messages"),
            json!({"text": "again"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("run_active"))
    );
    assert_eq!(
        app.delete_session(&session).await,
        204,
        "a running session can be deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_session_closes_its_sockets() {
    let app = spawn_app(json!([])).await;
    let (session, mut viewer) = app.open_session().await;
    assert_eq!(app.delete_session(&session).await, 204);
    match viewer.receive().await {
        crate::helpers::socket::Received::Closed(code) => assert_eq!(code, Some(1000)),
        crate::helpers::socket::Received::Frame(frame) => panic!("expected a close, got {frame:?}"),
    }
}
