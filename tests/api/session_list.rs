//! `GET /api/sessions/stream`: each signed-in page's session list, live. It opens with the
//! caller's list, then tells every change as it commits (created, a run starting, pausing
//! for its person, ending, renamed, deleted), only the caller's own, and ends when the
//! caller's credential does. Across instances: `instances.rs`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::provider::{openai_app, Reply};
use crate::helpers::socket::interrupt_id;
use crate::helpers::{spawn_app, spawn_app_with_users};

fn ask() -> Value {
    json!({"toolCalls": [{"name": "request_input", "arguments": {"prompt": "Name?", "kind": "text"}}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_opens_with_the_sessions_and_follows_each_change_as_it_commits() {
    let app = spawn_app(json!([ask(), {"text": "Hello, Ada."}])).await;
    let older = app.create_session().await;
    let mut list = app.list_stream().await;
    let snapshot = list.expect().await;
    assert_eq!(snapshot["type"], "snapshot", "{snapshot}");
    let (_, listed) = app.get("/api/sessions").await;
    assert_eq!(
        snapshot["sessions"], listed["sessions"],
        "what GET /api/sessions lists"
    );
    assert_eq!(snapshot["sessions"][0]["id"], older.as_str());

    let session = app.create_session().await;
    list.until_status(&session, "idle").await;

    let mut socket = app.socket(&session, 0).await;
    app.say(&session, "What is my name?").await;
    // The list reads each changed row when it hears of it, so a run that reaches its
    // question before the row is read is told once, as waiting (a held run's `running`
    // is told in the next test); whatever came before the question was `running`.
    let waiting = list
        .until_session(&session, "the question", |told| {
            assert!(
                told["status"] == "running" || told["status"] == "awaiting_input",
                "{told}"
            );
            told["status"] == "awaiting_input"
        })
        .await;
    assert_eq!(
        waiting["title"], "What is my name?",
        "the first message titles it: {waiting}"
    );
    let id = interrupt_id(&socket.until_run_end().await);
    let answer = json!({"status": "resolved", "payload": {"text": "Ada"}});
    let path = format!("/api/sessions/{session}/interrupts/{id}");
    assert_eq!(app.post(&path, answer).await.0, 202);
    let done = list.until_status(&session, "idle").await;
    assert!(
        done["lastSeq"].as_u64().unwrap() > waiting["lastSeq"].as_u64().unwrap(),
        "{done}"
    );

    let path = format!("/api/sessions/{session}");
    assert_eq!(app.patch(&path, json!({"title": "Names"})).await.0, 200);
    list.until_session(&session, "the rename", |told| told["title"] == "Names")
        .await;

    assert_eq!(app.delete_session(&older).await, 204);
    list.until_removed(&older).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_tells_a_run_that_is_running_and_its_stop() {
    // The provider never answers, so the run is held in `running` until it is stopped.
    let (app, mut provider) = openai_app(vec![Reply::Silent(Duration::from_secs(60))], &[]).await;
    let session = app.create_session().await;
    let mut list = app.list_stream().await;
    assert_eq!(list.expect().await["type"], "snapshot");
    app.say(&session, "hello").await;
    provider.received(1).await;
    let running = list.until_status(&session, "running").await;
    assert_eq!(running["title"], "hello", "{running}");
    let path = format!("/api/sessions/{session}/cancel");
    assert_eq!(app.post(&path, json!({})).await.0, 202);
    let stopped = list.until_status(&session, "idle").await;
    assert!(
        stopped["lastSeq"].as_u64().unwrap() > running["lastSeq"].as_u64().unwrap(),
        "{stopped}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_hears_only_its_own_users_sessions() {
    let users = spawn_app_with_users(json!([{"text": "Hi."}]), &[], &["ada", "bob"]).await;
    let (ada, bob) = (&users[0], &users[1]);
    let mut adas = ada.list_stream().await;
    assert_eq!(
        adas.expect().await,
        json!({"type": "snapshot", "sessions": []})
    );
    let mut bobs = bob.list_stream().await;
    assert_eq!(bobs.expect().await["type"], "snapshot");
    // Bob's session comes, runs, goes: Ada's list hears none of it.
    let his = bob.create_session().await;
    let mut socket = bob.socket(&his, 0).await;
    bob.say(&his, "hello").await;
    socket.until_run_end().await;
    bobs.until_status(&his, "idle").await;
    assert_eq!(bob.delete_session(&his).await, 204);
    bobs.until_removed(&his).await;
    // The first thing Ada's list tells is her own session.
    let hers = ada.create_session().await;
    let first = adas.expect().await;
    assert_eq!(first["type"], "changed", "{first}");
    assert_eq!(first["session"]["id"], hers.as_str(), "{first}");
    // Her deletion is not told to Bob either.
    assert_eq!(ada.delete_session(&hers).await, 204);
    adas.until_removed(&hers).await;
    let mine = bob.create_session().await;
    let next = bobs.expect().await;
    assert_eq!(next["session"]["id"], mine.as_str(), "{next}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_is_refused_without_credentials_or_an_event_stream_accept() {
    let users = spawn_app_with_users(json!([{"text": "Hi."}]), &[], &["ada"]).await;
    let ada = &users[0];
    let anonymous = ada.anonymous().http.get(ada.url("/api/sessions/stream"));
    assert_eq!(anonymous.send().await.unwrap().status(), 401);
    let json_only = ada
        .http
        .get(ada.url("/api/sessions/stream"))
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(json_only.status(), 406);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_ends_when_its_sign_out_does() {
    let users = spawn_app_with_users(json!([{"text": "Hi."}]), &[], &["ada"]).await;
    let ada = &users[0];
    let token = ada.token.clone().unwrap();
    // Signed in as the page is: a cookie.
    let login = reqwest::Client::new()
        .post(ada.url("/api/auth/login"))
        .json(&json!({"token": token}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 200);
    let cookie = login.headers()["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_string();
    let mut page = ada.anonymous();
    page.http = page_client(&cookie);
    let mut list = page.list_stream().await;
    assert_eq!(list.expect().await["type"], "snapshot");
    let out = page
        .http
        .post(page.url("/api/auth/logout"))
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 204);
    let ended = tokio::time::timeout(Duration::from_secs(20), list.next()).await;
    assert_eq!(
        ended.expect("the list ends in time"),
        None,
        "nothing after the sign-out"
    );
}

/// A client that sends the sign-in cookie with every request.
fn page_client(cookie: &str) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::COOKIE, cookie.parse().unwrap());
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap()
}

/// Opens `app`'s session list over a connection of its own, as a page does; the
/// response's head and the snapshot, or the refusal (status and head).
async fn open_list(app: &crate::helpers::TestApp) -> Result<tokio::net::TcpStream, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut page = tokio::net::TcpStream::connect(&app.address).await.unwrap();
    let (name, value) = app.auth_header().unwrap();
    let request = format!(
        "GET /api/sessions/stream HTTP/1.1\r\nHost: {}\r\n{name}: {value}\r\n\
         Accept: text/event-stream\r\n\r\n",
        app.address
    );
    page.write_all(request.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    loop {
        let text = String::from_utf8_lossy(&received).to_string();
        if text.contains("\"snapshot\"") {
            return Ok(page);
        }
        if text.contains("\r\n\r\n") && !text.starts_with("HTTP/1.1 200") {
            return Err(text);
        }
        let mut buffer = [0; 4096];
        let read = tokio::time::timeout(Duration::from_secs(10), page.read(&mut buffer));
        let n = read.await.expect("the list answers").unwrap();
        assert!(n > 0, "the list's connection ended: {text}");
        received.extend_from_slice(&buffer[..n]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_list_gives_its_socket_place_back_at_once() {
    let flags = ["--sockets-per-user", "1"];
    let users = spawn_app_with_users(json!([{"text": "Hi."}]), &flags, &["ada"]).await;
    let ada = &users[0];
    for reload in 0..5 {
        // The page before closed its list's connection (a reload). The place comes back as
        // soon as the server reads the close, not at the next keep-alive comment (15 s),
        // whose write would find the connection gone.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        let page = loop {
            match open_list(ada).await {
                Ok(page) => break page,
                Err(refused) if tokio::time::Instant::now() < deadline => {
                    assert!(refused.starts_with("HTTP/1.1 429"), "{refused}");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(refused) => panic!("reload {reload}: the place is still held: {refused}"),
            }
        };
        drop(page);
    }
}
