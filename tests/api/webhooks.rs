//! Webhooks when a session starts waiting: signed, retried with backoff through a receiver
//! that fails and times out, delivered at least once with one id, also across a restart.

use std::time::Duration;

use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::helpers::child::Tandem;
use crate::helpers::provider::{ProviderServer, Recorded, Reply};
use crate::helpers::{fresh_database, spawn_app_with, write_script, TestApp};

const SECRET: &str = "whsec-test-secret";

fn reply(status: u16) -> Reply {
    Reply::Status {
        status,
        headers: Vec::new(),
        body: "{}".into(),
    }
}

fn asking() -> Value {
    json!([
        {"toolCalls": [{"name": "request_input", "arguments": {"prompt": "Ship it?", "kind": "confirm"}}]},
        {"text": "Shipped."},
    ])
}

/// Flags that deliver to `receiver`, quickly.
fn flags(dir: &std::path::Path, receiver: &ProviderServer) -> Vec<String> {
    let secret = dir.join("webhook-secret");
    std::fs::write(&secret, format!("{SECRET}\n")).unwrap();
    vec![
        "--webhook-url".into(),
        format!("{}/hooks/tandem", receiver.url),
        "--webhook-secret-file".into(),
        secret.display().to_string(),
        "--webhook-timeout-ms".into(),
        "300".into(),
        "--webhook-retry-ms".into(),
        "50".into(),
        "--public-url".into(),
        "https://tandem.example.com".into(),
    ]
}

/// Checks a request's signature as a receiver would: HMAC-SHA256 of `<t>.<body>`.
fn verify(request: &Recorded) {
    let header = request.header("x-tandem-signature").expect("signed");
    let (t, v1) = header
        .strip_prefix("t=")
        .and_then(|rest| rest.split_once(",v1="))
        .expect("t=…,v1=…");
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(format!("{t}.{}", request.body).as_bytes());
    let expected: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(v1, expected, "the signature checks out");
}

/// The first delivery of `session` as the API shows it, once the deliverer has recorded
/// its last attempt: another session is made to wait, and when its delivery (the
/// `count`-th request) arrives, the deliverer, which records each attempt before it
/// makes the next, has recorded the earlier one.
async fn recorded(
    app: &TestApp,
    receiver: &mut ProviderServer,
    count: usize,
    session: &str,
) -> Value {
    let (other, mut socket) = app.open_session().await;
    app.say(&other, "another release").await;
    socket.until_run_end().await;
    receiver.received(count).await;
    let (status, body) = app.get(&format!("/api/sessions/{session}/webhooks")).await;
    assert_eq!(status, 200, "{body}");
    body["deliveries"][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_session_is_announced_through_failures_and_a_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut receiver = ProviderServer::start(vec![
        reply(500),
        Reply::Silent(Duration::from_secs(2)),
        reply(204),
        reply(204),
    ])
    .await;
    let flags = flags(dir.path(), &receiver);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let app = spawn_app_with(asking(), &flags).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "release").await;
    let paused = socket.until_run_end().await;
    let interrupt = crate::helpers::socket::interrupt_id(&paused);

    receiver.received(3).await;
    let requests = receiver.requests();
    let ids: Vec<&str> = requests
        .iter()
        .map(|r| r.header("x-tandem-delivery").unwrap())
        .collect();
    assert_eq!(ids, [ids[0]; 3], "the same delivery id on every attempt");
    for (n, request) in requests.iter().enumerate() {
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/hooks/tandem")
        );
        assert_eq!(request.header("x-tandem-event"), Some("session.waiting"));
        verify(request);
        assert_eq!(request.body["attempt"], n + 1);
    }
    let body = &requests[2].body;
    assert_eq!(body["id"], ids[0]);
    assert_eq!(body["session"]["id"], session.as_str());
    assert_eq!(
        body["session"]["link"],
        format!("https://tandem.example.com/#/sessions/{session}")
    );
    assert_eq!(body["interrupt"]["id"], interrupt.as_str());
    assert_eq!(body["interrupt"]["message"], "Ship it?");

    let delivery = recorded(&app, &mut receiver, 4, &session).await;
    assert_eq!(delivery["state"], "delivered", "{delivery}");
    assert_eq!(delivery["attempts"], 3);
    assert_eq!(delivery["lastStatus"], 204);
    assert!(delivery["deliveredAt"].is_i64());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_owed_before_a_restart_is_made_after_it() {
    let (dir, url) = fresh_database();
    let mut receiver = ProviderServer::start(vec![reply(503), reply(200), reply(200)]).await;
    let script = write_script(dir.path(), asking());
    let flags = flags(dir.path(), &receiver);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mut tandem = Tandem::spawn_with(&url, &script, &flags);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "release").await;
    socket.until_run_end().await;
    receiver.received(1).await;
    tandem.kill();

    let restarted = Tandem::spawn_with(&url, &script, &flags);
    receiver.received(2).await;
    let requests = receiver.requests();
    assert_eq!(
        requests[0].header("x-tandem-delivery"),
        requests[1].header("x-tandem-delivery"),
        "the restarted instance delivers the same delivery"
    );
    verify(&requests[1]);
    let delivery = recorded(&restarted.client(), &mut receiver, 3, &session).await;
    assert_eq!(delivery["state"], "delivered", "{delivery}");
    // The kill may come before the first attempt's 503 is recorded: at least once.
    let attempts = delivery["attempts"].as_i64().unwrap();
    assert!((1..=2).contains(&attempts), "{delivery}");
}
