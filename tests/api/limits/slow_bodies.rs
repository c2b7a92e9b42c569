//! Request bodies that stop arriving, over raw TCP: with `--body-timeout-ms` short, a body
//! that stalls (or trickles) on any route that reads one gets 408 `request_timeout` with
//! the security headers, and the connection is closed, so a client cannot hold a
//! descriptor by never finishing its body.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::{spawn_app_with, spawn_app_with_users, TestApp};

/// The body timeout the tests configure, in milliseconds.
const TIMEOUT_MS: u64 = 300;
/// The longest a test waits for the server to answer and close.
const PATIENCE: Duration = Duration::from_secs(10);

/// Sends `head` (a request head without its final blank line), then `first` of its body,
/// then `trickle` one byte every 50 ms (never done), and reads until the server closes;
/// the lowercase response and how long it took.
async fn stall(
    what: &str,
    app: &TestApp,
    head: &str,
    first: &[u8],
    trickle: bool,
) -> (String, Duration) {
    let mut stream = TcpStream::connect(&app.address).await.unwrap();
    let auth = app.auth_header().map_or(String::new(), |(name, value)| {
        format!("{name}: {value}\r\n")
    });
    let head = format!("{head}\r\nHost: {}\r\n{auth}\r\n", app.address);
    let started = Instant::now();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(first).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let trickling = tokio::spawn(async move {
        // Without a trickle the body is held open (not closed) until the server ends it.
        if !trickle {
            std::future::pending::<()>().await;
        }
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if writer.write_all(b" ").await.is_err() {
                return;
            }
        }
    });
    let mut received = Vec::new();
    let read = tokio::time::timeout(PATIENCE, reader.read_to_end(&mut received)).await;
    trickling.abort();
    assert!(
        read.is_ok(),
        "{what}: the server still holds the connection after {PATIENCE:?}; it sent: {:?}",
        String::from_utf8_lossy(&received)
    );
    let text = String::from_utf8_lossy(&received).to_ascii_lowercase();
    (text, started.elapsed())
}

fn assert_timed_out(what: &str, (response, took): &(String, Duration)) {
    assert!(response.starts_with("http/1.1 408"), "{what}: {response:?}");
    assert!(
        response.contains("\"request_timeout\""),
        "{what}: {response}"
    );
    for header in [
        "x-content-type-options: nosniff",
        "x-frame-options: deny",
        "content-security-policy: default-src 'none'",
    ] {
        assert!(response.contains(header), "{what}: {header} in {response}");
    }
    assert!(
        *took >= Duration::from_millis(TIMEOUT_MS),
        "{what}: cut after {took:?}, before the timeout"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_stops_arriving_gets_408_and_its_connection_is_closed() {
    let timeout = TIMEOUT_MS.to_string();
    let flags = ["--body-timeout-ms", timeout.as_str()];
    let users = spawn_app_with_users(json!([]), &flags, &["alice"]).await;
    let alice = &users[0];
    let anonymous = alice.anonymous();
    let session = alice.create_session().await;
    let json = "Content-Type: application/json";
    let cases = [
        (
            "a sign-in, unauthenticated",
            &anonymous,
            format!("POST /api/auth/login HTTP/1.1\r\n{json}\r\nContent-Length: 100"),
        ),
        (
            "a JSON body",
            alice,
            format!(
                "POST /api/sessions/{session}/messages HTTP/1.1\r\n{json}\r\nContent-Length: 100"
            ),
        ),
        (
            "an upload",
            alice,
            format!(
                "POST /api/sessions/{session}/attachments?name=a.txt HTTP/1.1\r\n\
                 Content-Type: text/plain\r\nContent-Length: 100000"
            ),
        ),
        (
            "an AG-UI input",
            alice,
            format!(
                "POST /api/agui HTTP/1.1\r\n{json}\r\nAccept: text/event-stream\r\n\
                 Content-Length: 100"
            ),
        ),
        (
            "a chunked body",
            alice,
            format!(
                "POST /api/sessions/{session}/messages HTTP/1.1\r\n{json}\r\n\
                 Transfer-Encoding: chunked"
            ),
        ),
    ];
    for (what, client, head) in cases {
        let first: &[u8] = match head.contains("chunked") {
            true => b"5\r\n{\"tex\r\n",
            false => b"{\"tex",
        };
        assert_timed_out(what, &stall(what, client, &head, first, false).await);
    }
    // A route that answers without reading the body does not wait for the rest either
    // (actix-http would read a chunked one to its end, however slowly it came).
    let what = "a chunked body the route does not read";
    let head = format!("POST /api/nowhere HTTP/1.1\r\n{json}\r\nTransfer-Encoding: chunked");
    let (response, _) = stall(what, alice, &head, b"5\r\n{\"tex\r\n", false).await;
    assert!(response.starts_with("http/1.1 404"), "{what}: {response}");
    assert!(response.contains("connection: close"), "{what}: {response}");
    // Nor does it keep a connection whose body it left unread, even a whole one: the
    // answer says the connection closes, so no client sends another request on it just
    // as the server closes it.
    let head = format!("POST /api/nowhere HTTP/1.1\r\n{json}\r\nContent-Length: 5");
    let what = "a whole body the route does not read";
    let (response, _) = stall(what, alice, &head, b"{\"a\":", false).await;
    assert!(response.starts_with("http/1.1 404"), "{what}: {response}");
    assert!(response.contains("connection: close"), "{what}: {response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_trickles_a_byte_at_a_time_is_cut_too() {
    let timeout = TIMEOUT_MS.to_string();
    let app = spawn_app_with(json!([]), &["--body-timeout-ms", timeout.as_str()]).await;
    let session = app.create_session().await;
    let head = format!(
        "POST /api/sessions/{session}/attachments?name=a.txt HTTP/1.1\r\n\
         Content-Type: text/plain\r\nContent-Length: 100000"
    );
    let what = "a trickled upload";
    assert_timed_out(what, &stall(what, &app, &head, b"hello", true).await);
    // A body that arrives at once is read as ever, and a socket idles as long as it likes.
    let (status, _) = app
        .post(
            &format!("/api/sessions/{session}/messages"),
            json!({"text": "hi"}),
        )
        .await;
    assert_ne!(status, 408);
    let mut socket = app.socket(&session, 0).await;
    tokio::time::sleep(Duration::from_millis(3 * TIMEOUT_MS)).await;
    socket.backlog().await;
}
