//! `--log-format json`: every line the binary logs is a JSON object, and every line logged
//! inside a run carries its session and run ids, inside a socket its session, also when
//! `RUST_LOG=warn` filters out everything but warnings and errors.

use std::time::Duration;

use serde_json::{json, Value};

use crate::faults::raw_ws::{RawSocket, TEXT};
use crate::helpers::child::Tandem;
use crate::helpers::provider::{ProviderServer, Reply};
use crate::helpers::{fresh_database, key_file, write_script};

/// Every line it logged, each parsed (a line that is not JSON fails the test).
fn parsed(tandem: &Tandem) -> Vec<Value> {
    let lines = tandem.log();
    let parsed: Vec<Value> = lines
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    for line in &parsed {
        for field in ["timestamp", "level", "target"] {
            assert!(line[field].is_string(), "no {field}: {line}");
        }
    }
    parsed
}

/// Whether a line comes from code that only runs inside a run.
fn inside_a_run(line: &Value) -> bool {
    let target = line["target"].as_str().unwrap_or_default();
    [
        "tandem::agent::run",
        "tandem::agent::engines",
        "tandem::agent::tools",
    ]
    .iter()
    .any(|inside| target.starts_with(inside))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_lines_parse_and_carry_the_session_and_run() {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), json!([{"text": "Logged."}]));
    let tandem = Tandem::spawn_with(&url, &script, &["--log-format", "json"]);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    let run = app.say(&session, "hello").await;
    socket.until_run_end().await;
    assert!(tandem.logged("run ended", Duration::from_secs(10)).await);
    socket.close().await;
    assert!(tandem.logged("socket ended", Duration::from_secs(10)).await);

    let parsed = parsed(&tandem);
    let about_the_run: Vec<&Value> = parsed.iter().filter(|l| inside_a_run(l)).collect();
    let messages: Vec<&str> = about_the_run
        .iter()
        .map(|l| l["message"].as_str().unwrap())
        .collect();
    assert!(messages.contains(&"run started") && messages.contains(&"run ended"));
    for line in &about_the_run {
        assert_eq!(line["session"], session.as_str(), "{line}");
        assert_eq!(line["run"], run.as_str(), "{line}");
    }
    let ended = about_the_run
        .iter()
        .find(|l| l["message"] == "run ended")
        .unwrap();
    assert!(ended["seconds"].is_f64(), "a duration is a number: {ended}");
    let sockets: Vec<&Value> = parsed
        .iter()
        .filter(|l| l["target"].as_str().unwrap().starts_with("tandem::ws"))
        .collect();
    assert!(!sockets.is_empty(), "the socket's end is logged");
    for line in sockets {
        assert_eq!(line["session"], session.as_str(), "{line}");
    }
    let listening = parsed.iter().find(|l| {
        l["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Tandem is listening"))
    });
    assert!(listening.is_some(), "the listening line is JSON too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warnings_inside_a_run_keep_its_ids_when_only_warnings_are_logged() {
    let (dir, url) = fresh_database();
    let broken = Reply::status(500, &[], "openai/server_error.json");
    let server = ProviderServer::start(vec![broken, Reply::sse("openai/text.sse")]).await;
    let script = write_script(dir.path(), json!([]));
    let base = format!("{}/v1", server.url);
    let key = key_file("sk-test-123");
    let flags = [
        "--log-format",
        "json",
        "--engine",
        "openai",
        "--openai-base-url",
        &base,
        "--openai-api-key-file",
        &key,
        "--retry-base-ms",
        "10",
    ];
    let quiet = [("RUST_LOG", "warn,tandem::listening=info")];
    let tandem = Tandem::spawn_with_env(&url, &script, &flags, &quiet);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    let run = app.say(&session, "hello").await;
    socket.until_run_end().await;
    assert!(tandem.logged("retrying", Duration::from_secs(10)).await);

    let parsed = parsed(&tandem);
    let retry = parsed
        .iter()
        .find(|l| l["message"] == "model call failed; retrying")
        .expect("the retry is logged");
    assert_eq!(retry["level"], "WARN");
    assert_eq!(retry["session"], session.as_str(), "{retry}");
    assert_eq!(retry["run"], run.as_str(), "{retry}");
    assert!(retry["wait_ms"].is_u64(), "numbers stay numbers: {retry}");
    let info = parsed
        .iter()
        .filter(|l| l["level"] == "INFO" && l["target"] != "tandem::listening");
    assert_eq!(info.count(), 0, "RUST_LOG=warn filters");
}

/// Writes `request` to a new connection and reads until the server closes it.
async fn send_raw(address: &str, request: &[u8]) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    // The end of a request the server refuses may be reset; its answer came before.
    let _ = stream.write_all(request).await;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    assert!(
        answer.starts_with(b"HTTP/1.1 4"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_mistakes_are_a_bounded_number_of_warnings_never_errors() {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), json!([]));
    // Debug for the mistakes' own lines, so the test can wait for every one of them.
    let env = [("RUST_LOG", "info,tandem::telemetry=debug")];
    let tandem = Tandem::spawn_with_env(&url, &script, &["--log-format", "json"], &env);
    let app = tandem.client();
    let address = tandem.address().to_string();
    let session = app.create_session().await;
    const ROUNDS: usize = 15;
    let huge_head = format!("GET / HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(200_000));
    for _ in 0..ROUNDS {
        send_raw(&address, b"GARBAGE\r\n\r\n").await;
        send_raw(&address, huge_head.as_bytes()).await;
        let bad_json = app
            .http
            .post(app.url("/api/sessions"))
            .header("content-type", "application/json");
        assert_eq!(bad_json.body("{bad").send().await.unwrap().status(), 400);
        let text = app
            .http
            .post(app.url("/api/sessions"))
            .header("content-type", "text/plain");
        assert_eq!(text.body("{}").send().await.unwrap().status(), 415);
        for path in [
            "/api/sessions/not-a-uuid",
            "/api/sessions/%FF%FE",
            "/api/sessions?foo=1",
        ] {
            let status = app.http.get(app.url(path)).send().await.unwrap().status();
            assert_eq!(status, 400, "{path}");
        }
        let ws_path = format!("/api/sessions/{session}/ws");
        let mut socket = RawSocket::connect(&address, &ws_path).await;
        socket.send_frame(true, TEXT, b"\xff\xfe", true).await;
        assert_eq!(socket.close_code().await, Some(1007), "invalid UTF-8");
        let mut socket = RawSocket::connect(&address, &ws_path).await;
        socket.send_frame(false, 0x9, b"ping", true).await;
        assert_eq!(socket.close_code().await, Some(1002), "a fragmented ping");
    }
    let mistakes = 4 * ROUNDS;
    assert!(
        tandem
            .logged_times("a client's mistake", mistakes, Duration::from_secs(30))
            .await,
        "every mistake is logged, as a warning or at debug"
    );

    let parsed = parsed(&tandem);
    let at = |level: &'static str| parsed.iter().filter(move |l| l["level"] == level);
    let errors: Vec<&Value> = at("ERROR").collect();
    assert!(
        errors.is_empty(),
        "client mistakes logged as errors: {errors:?}"
    );
    let warned = at("WARN")
        .filter(|l| {
            l["message"]
                .as_str()
                .unwrap()
                .starts_with("a client's mistake")
        })
        .count();
    assert!(
        (1..=tandem::telemetry::WARNINGS_PER_MINUTE as usize).contains(&warned),
        "{warned} warnings for {mistakes} mistakes"
    );
    let other_warnings: Vec<&Value> = at("WARN")
        .filter(|l| {
            !l["message"]
                .as_str()
                .unwrap()
                .starts_with("a client's mistake")
        })
        .filter(|l| l["target"] != "tandem::routes::page")
        .collect();
    assert!(other_warnings.is_empty(), "{other_warnings:?}");
}
