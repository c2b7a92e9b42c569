//! Webhooks when a session starts waiting (and when a run ends, if asked): signed over
//! the bytes sent, retried with growing waits through a receiver that fails and times
//! out, delivered at least once with one id, across a restart, one attempt at a time
//! among several instances, and never held up by another receiver that hangs.
//!
//! The binary runs as a child process: the deliverer logs "webhook delivered" once it has
//! recorded a delivery, which is what the tests wait for before reading the API.

use std::time::Duration;

use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

mod feedback;
mod instances;
mod run_ends;

use crate::helpers::child::Tandem;
use crate::helpers::provider::{ProviderServer, Recorded, Reply};
use crate::helpers::{fresh_database, write_script, TestApp};

const SECRET: &str = "whsec-test-secret";
/// How long a test waits for a log line.
const PATIENCE: Duration = Duration::from_secs(10);

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

/// The URL deliveries go to on `receiver`.
fn hook(receiver: &ProviderServer) -> String {
    format!("{}/hooks/tandem?token=hook-secret", receiver.url)
}

/// Flags that deliver to `urls` quickly (a 300 ms limit, 50 ms first retry), then `extra`.
fn flags(dir: &std::path::Path, urls: &[String], extra: &[&str]) -> Vec<String> {
    let secret = dir.join("webhook-secret");
    std::fs::write(&secret, format!("{SECRET}\n")).unwrap();
    let mut flags = vec![
        "--webhook-url".to_string(),
        urls.join(","),
        "--webhook-secret-file".into(),
        secret.display().to_string(),
        // Long enough that a loaded machine does not time a delivery out: a receiver's
        // scripted replies are counted, and an attempt given up while the receiver still
        // answers spends one (the timeout's own test sets 300 ms).
        "--webhook-timeout-ms".into(),
        "3000".into(),
        "--webhook-retry-ms".into(),
        "50".into(),
        "--public-url".into(),
        "https://tandem.example.com".into(),
    ];
    flags.extend(extra.iter().map(|flag| flag.to_string()));
    flags
}

/// Starts the binary on `url` with `turns` and these flags.
fn spawn(dir: &std::path::Path, url: &str, turns: Value, flags: &[String]) -> Tandem {
    let script = write_script(dir, turns);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    Tandem::spawn_with(url, &script, &flags)
}

/// Checks a request's signature as a receiver would: HMAC-SHA256 of `<t>.` and the body's
/// bytes as they arrived.
fn verify(request: &Recorded) {
    let header = request.header("x-tandem-signature").expect("signed");
    let (t, v1) = header
        .strip_prefix("t=")
        .and_then(|rest| rest.split_once(",v1="))
        .expect("t=…,v1=…");
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(&request.raw);
    let expected: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(v1, expected, "the signature checks out");
}

/// The waits between consecutive requests.
fn gaps(requests: &[Recorded]) -> Vec<Duration> {
    requests.windows(2).map(|w| w[1].at - w[0].at).collect()
}

/// A session's deliveries as the API shows them.
async fn deliveries(app: &TestApp, session: &str) -> Vec<Value> {
    let (status, body) = app.get(&format!("/api/sessions/{session}/webhooks")).await;
    assert_eq!(status, 200, "{body}");
    body["deliveries"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_session_is_announced_through_failures_and_a_timeout() {
    let (dir, url) = fresh_database();
    let replies = vec![
        reply(500),
        Reply::Silent(Duration::from_secs(2)),
        reply(204),
    ];
    let mut receiver = ProviderServer::start(replies).await;
    let flags = flags(
        dir.path(),
        &[hook(&receiver)],
        &["--webhook-timeout-ms", "300"],
    );
    let tandem = spawn(dir.path(), &url, asking(), &flags);
    let app = tandem.client();
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
        assert_eq!(request.method, "POST");
        assert_eq!(request.path, "/hooks/tandem?token=hook-secret");
        assert_eq!(request.header("x-tandem-event"), Some("session.waiting"));
        verify(request);
        assert_eq!(request.body["attempt"], n + 1);
    }
    let waits = gaps(&requests);
    assert!(
        waits[0] >= Duration::from_millis(50),
        "the first retry's wait: {waits:?}"
    );
    let after_timeout = Duration::from_millis(300 + 100);
    assert!(
        waits[1] >= after_timeout,
        "the time limit, then twice the wait: {waits:?}"
    );
    let body = &requests[2].body;
    assert_eq!(body["id"], ids[0]);
    assert_eq!(body["event"], "session.waiting");
    assert_eq!(body["session"]["id"], session.as_str());
    assert_eq!(
        body["session"]["link"],
        format!("https://tandem.example.com/#/sessions/{session}")
    );
    assert_eq!(body["interrupt"]["id"], interrupt.as_str());
    assert_eq!(body["interrupt"]["message"], "Ship it?");

    assert!(tandem.logged("webhook delivered", PATIENCE).await);
    let table = deliveries(&app, &session).await;
    println!(
        "webhook deliveries (GET /api/sessions/{{id}}/webhooks): {}",
        serde_json::to_string_pretty(&table).unwrap()
    );
    let delivery = &table[0];
    assert_eq!(delivery["state"], "delivered", "{delivery}");
    assert_eq!(delivery["event"], "session.waiting");
    assert_eq!(delivery["interruptId"], interrupt.as_str());
    assert_eq!(delivery["attempts"], 3);
    assert_eq!(delivery["lastStatus"], 204);
    assert!(delivery["deliveredAt"].is_i64());
    assert_eq!(
        delivery["url"], receiver.url,
        "the URL's origin only: {delivery}"
    );
    let shown = delivery.to_string();
    assert!(!shown.contains("hook-secret"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wait_between_attempts_doubles() {
    let (dir, url) = fresh_database();
    let replies = vec![reply(500), reply(502), reply(503), reply(204)];
    let mut receiver = ProviderServer::start(replies).await;
    let flags = flags(
        dir.path(),
        &[hook(&receiver)],
        &["--webhook-retry-ms", "300"],
    );
    let tandem = spawn(dir.path(), &url, asking(), &flags);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "release").await;
    socket.until_run_end().await;

    receiver.received(4).await;
    let waits = gaps(&receiver.requests());
    for (n, wait) in waits.iter().enumerate() {
        let backoff = Duration::from_millis(300 << n);
        assert!(
            *wait >= backoff,
            "wait {n} is at least {backoff:?}: {waits:?}"
        );
    }
    assert!(
        waits[2] > waits[0] + Duration::from_millis(300),
        "{waits:?}"
    );
    assert!(tandem.logged("webhook delivered", PATIENCE).await);
    assert_eq!(deliveries(&app, &session).await[0]["attempts"], 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_owed_before_a_restart_is_made_after_it() {
    let (dir, url) = fresh_database();
    let mut receiver = ProviderServer::start(vec![reply(503), reply(200)]).await;
    let flags = flags(dir.path(), &[hook(&receiver)], &[]);
    let mut tandem = spawn(dir.path(), &url, asking(), &flags);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "release").await;
    socket.until_run_end().await;
    receiver.received(1).await;
    tandem.kill();

    let restarted = spawn(dir.path(), &url, asking(), &flags);
    receiver.received(2).await;
    let requests = receiver.requests();
    assert_eq!(
        requests[0].header("x-tandem-delivery"),
        requests[1].header("x-tandem-delivery"),
        "the restarted instance delivers the same delivery"
    );
    verify(&requests[1]);
    assert!(restarted.logged("webhook delivered", PATIENCE).await);
    let delivery = &deliveries(&restarted.client(), &session).await[0];
    assert_eq!(delivery["state"], "delivered", "{delivery}");
    // Counted when claimed: the attempt the kill cut short and the one after the restart.
    assert_eq!(delivery["attempts"], 2, "{delivery}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_hangs_holds_up_no_other() {
    let (dir, url) = fresh_database();
    let hang = Reply::Silent(Duration::from_secs(10));
    let mut dead = ProviderServer::start(vec![hang.clone(), hang]).await;
    let mut live = ProviderServer::start(vec![reply(204), reply(204)]).await;
    let urls = [hook(&dead), hook(&live)];
    let flags = flags(dir.path(), &urls, &["--webhook-timeout-ms", "5000"]);
    let turns = json!([asking()[0], asking()[0]]);
    let tandem = spawn(dir.path(), &url, turns, &flags);
    let app = tandem.client();
    let (first, mut socket) = app.open_session().await;
    app.say(&first, "release").await;
    socket.until_run_end().await;
    dead.received(1).await;
    live.received(1).await;

    // The dead receiver holds its attempt for 5 s; the live one hears of the next
    // session at once.
    let (second, mut socket) = app.open_session().await;
    app.say(&second, "release").await;
    socket.until_run_end().await;
    let paused = std::time::Instant::now();
    live.received(2).await;
    let took = live.requests()[1].at - paused;
    assert!(took < Duration::from_millis(2_500), "took {took:?}");
    assert_eq!(live.requests()[1].body["session"]["id"], second.as_str());
}
