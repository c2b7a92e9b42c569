//! Bad client frames: an error frame and an open socket, or 1009 for oversized frames;
//! never a lost event or a dropped neighbour.

use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use crate::helpers::socket::Received;
use crate::helpers::spawn_app;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_and_unknown_frames_get_error_frames_and_the_socket_stays_open() {
    let app = spawn_app(json!([{"text": "still here"}])).await;
    let (session, mut socket) = app.open_session().await;
    for bad in [
        "not json",
        "{}",
        r#"{"kind":"dance"}"#,
        r#"{"kind":"user_message"}"#,
        r#"{"kind":"user_message","text":5}"#,
        "[]",
        "null",
    ] {
        socket.send_text(bad).await;
        assert_eq!(socket.error_code().await, "invalid_frame", "{bad}");
    }
    socket
        .send(json!({"kind": "user_message", "text": ""}))
        .await;
    assert_eq!(socket.error_code().await, "invalid_message");
    socket
        .send(
            json!({"kind": "resume", "interruptId": "int_x", "status": "resolved", "payload": {}}),
        )
        .await;
    assert_eq!(socket.error_code().await, "interrupt_not_found");
    socket.send(json!({"kind": "cancel"})).await;
    assert_eq!(socket.error_code().await, "idle");
    socket.send_message(Message::binary(vec![1, 2, 3])).await;
    assert_eq!(socket.error_code().await, "invalid_frame");
    assert!(app.log(&session).await.is_empty(), "bad frames log nothing");
    socket
        .send(json!({"kind": "user_message", "text": "hello", "clientMessageId": "m1"}))
        .await;
    let events = socket.until_run_end().await;
    assert_eq!(events.last().unwrap().1.type_name(), "RUN_FINISHED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_frame_closes_only_that_socket_with_1009() {
    let app = spawn_app(json!([{"text": "fine"}])).await;
    let session = app.create_session().await;
    let mut big = app.socket(&session, 0).await;
    let mut other = app.socket(&session, 0).await;
    big.backlog().await;
    other.backlog().await;
    big.send_text(&"x".repeat(100 * 1024)).await;
    match big.receive().await {
        Received::Closed(code) => assert_eq!(code, Some(1009)),
        Received::Frame(frame) => panic!("expected the close, got {frame:?}"),
    }
    other
        .send(json!({"kind": "user_message", "text": "still works"}))
        .await;
    assert_eq!(
        other.until_run_end().await.last().unwrap().1.type_name(),
        "RUN_FINISHED"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_for_unknown_sessions_are_refused() {
    let app = spawn_app(json!([])).await;
    let unknown = uuid::Uuid::now_v7();
    let result =
        tokio_tungstenite::connect_async(format!("ws://{}/api/sessions/{unknown}/ws", app.address))
            .await;
    match result {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 404)
        }
        other => panic!("expected a 404, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_answers_pings_is_closed_after_the_timeout() {
    let flags = [
        "--heartbeat-interval-ms",
        "50",
        "--client-timeout-ms",
        "200",
    ];
    let app = crate::helpers::spawn_app_with(json!([]), &flags).await;
    let session = app.create_session().await;
    let mut silent = raw_socket(&app.address, &format!("/api/sessions/{session}/ws")).await;
    let mut pings = 0;
    let code = loop {
        match read_frame(&mut silent).await {
            // 100 pings is 5 s at this interval, far past the 200 ms timeout.
            (0x9, _) if pings > 100 => panic!("a silent client was never closed"),
            (0x9, _) => pings += 1,
            (0x8, payload) => break u16::from_be_bytes([payload[0], payload[1]]),
            _ => {}
        }
    };
    assert!(pings >= 1, "the server pinged before giving up");
    assert_eq!(code, 1008);
}

/// A WebSocket opened over plain TCP that reads frames and never answers anything.
async fn raw_socket(address: &str, path: &str) -> tokio::net::TcpStream {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        head.push(stream.read_u8().await.unwrap());
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    stream
}

/// Reads one unmasked server frame: its opcode and payload.
async fn read_frame(stream: &mut tokio::net::TcpStream) -> (u8, Vec<u8>) {
    use tokio::io::AsyncReadExt;
    let deadline = std::time::Duration::from_secs(20);
    tokio::time::timeout(deadline, async {
        let first = stream.read_u8().await.unwrap();
        let length = match stream.read_u8().await.unwrap() & 0x7f {
            126 => u64::from(stream.read_u16().await.unwrap()),
            127 => stream.read_u64().await.unwrap(),
            short => u64::from(short),
        };
        let mut payload = vec![0; length as usize];
        stream.read_exact(&mut payload).await.unwrap();
        (first & 0x0f, payload)
    })
    .await
    .expect("a frame in time")
}
