//! Bad socket frames, table-driven, beyond what `frames.rs` covers: each gets its
//! documented `error` frame (the socket stays open and keeps receiving events) or closes
//! only its own socket; the logs stay byte-identical and a second viewer of the same
//! session keeps receiving events.

use serde_json::{json, Value};

use super::fixture::{fixture, Fixture};
use super::raw_ws::{RawSocket, BINARY, CONTINUATION, TEXT};

/// What a case sends.
enum Send {
    Text(String),
    Binary(Vec<u8>),
    /// A single text frame carrying these raw bytes (may be invalid UTF-8).
    RawText(Vec<u8>),
    /// A text message in fragments: a text frame, then continuations.
    Fragments(Vec<Vec<u8>>),
    /// A continuation with no message to continue.
    StrayContinuation,
    /// A text frame without the mask every client frame must have.
    Unmasked(String),
}

/// What the server must answer.
#[derive(Debug)]
enum Expect {
    Error(&'static str),
    /// A close with one of these codes.
    Close(&'static [u16]),
}

fn nested(depth: usize) -> String {
    "[".repeat(depth) + &"]".repeat(depth)
}

fn cases(f: &Fixture) -> Vec<(&'static str, Send, Expect)> {
    use Expect::*;
    use Send::*;
    let frame = |value: Value| Text(value.to_string());
    let resume = |id: &str, payload: Value| {
        frame(
            json!({"kind": "resume", "interruptId": id, "status": "resolved", "payload": payload}),
        )
    };
    let message = |text: String| frame(json!({"kind": "user_message", "text": text}));
    let nested_payload = format!(
        r#"{{"kind":"resume","interruptId":"{}","status":"resolved","payload":{}}}"#,
        f.answered,
        nested(10_000)
    );
    vec![
        (
            "truncated JSON",
            Text(r#"{"kind":"#.into()),
            Error("invalid_frame"),
        ),
        (
            "status of the wrong type",
            frame(json!({"kind": "resume", "interruptId": "int_x", "status": 5})),
            Error("invalid_frame"),
        ),
        (
            "unknown status",
            frame(json!({"kind": "resume", "interruptId": "int_x", "status": "maybe"})),
            Error("invalid_frame"),
        ),
        (
            "numeric interrupt id",
            frame(json!({"kind": "resume", "interruptId": 5, "status": "resolved"})),
            Error("invalid_frame"),
        ),
        (
            "unknown field",
            frame(json!({"kind": "user_message", "text": "hi", "urgent": true})),
            Error("invalid_frame"),
        ),
        (
            "unknown field of a cancel",
            frame(json!({"kind": "cancel", "runId": "run_x"})),
            Error("invalid_frame"),
        ),
        (
            "kind in upper case",
            frame(json!({"kind": "USER_MESSAGE", "text": "hi"})),
            Error("invalid_frame"),
        ),
        (
            "null kind",
            frame(json!({"kind": null})),
            Error("invalid_frame"),
        ),
        (
            "empty text frame",
            Text(String::new()),
            Error("invalid_frame"),
        ),
        (
            "10,000 nested arrays",
            Text(nested(10_000)),
            Error("invalid_frame"),
        ),
        (
            "payload of 10,000 nested arrays",
            Text(nested_payload),
            Error("invalid_frame"),
        ),
        (
            "message over 32 KiB",
            message("x".repeat(40_000)),
            Error("invalid_message"),
        ),
        (
            "message over 32 KiB in bytes, not chars",
            message("é".repeat(16_400)),
            Error("invalid_message"),
        ),
        (
            "empty clientMessageId",
            frame(json!({"kind": "user_message", "text": "hi", "clientMessageId": ""})),
            Error("invalid_message"),
        ),
        (
            "another session's interrupt",
            resume(&f.pending, json!({"text": "x"})),
            Error("interrupt_not_found"),
        ),
        (
            "a different answer to an answered interrupt",
            resume(&f.answered, json!({"text": "other"})),
            Error("interrupt_already_answered"),
        ),
        (
            "binary invalid UTF-8",
            Binary(vec![0xff, 0xfe, 0x00, 0xc3]),
            Error("invalid_frame"),
        ),
        (
            "binary frame holding a valid message",
            Binary(br#"{"kind":"user_message","text":"hi"}"#.to_vec()),
            Error("invalid_frame"),
        ),
        (
            "empty binary frame",
            Binary(Vec::new()),
            Error("invalid_frame"),
        ),
        (
            "text of exactly 64 KiB",
            Text("x".repeat(64 * 1024)),
            Error("invalid_frame"),
        ),
        (
            "fragments under 64 KiB",
            Fragments(vec![br#"{"kind":"#.to_vec(), br#""dance"}"#.to_vec()]),
            Error("invalid_frame"),
        ),
        // RFC 6455 §8.1 asks for 1007; 1002 (protocol error) also ends only this socket.
        (
            "text frame with invalid UTF-8",
            RawText(vec![b'{', 0xff, 0xfe, b'}']),
            Close(&[1007, 1002]),
        ),
        (
            "text of 64 KiB + 1",
            Text("x".repeat(64 * 1024 + 1)),
            Close(&[1009]),
        ),
        (
            "binary over 64 KiB",
            Binary(vec![b'x'; 100 * 1024]),
            Close(&[1009]),
        ),
        // The documented limit is on what a client sends; a message of small fragments
        // over it is just as oversized, and 1002 would blame the client's protocol.
        (
            "fragments over 64 KiB",
            Fragments(vec![vec![b' '; 30_000]; 3]),
            Close(&[1009]),
        ),
        ("stray continuation", StrayContinuation, Close(&[1002])),
        (
            "unmasked frame",
            Unmasked(r#"{"kind":"cancel"}"#.into()),
            Close(&[1002]),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_frames_get_their_error_and_disturb_nobody() {
    let mut f = fixture().await;
    let path = format!("/api/sessions/{}/ws?after=1000000", f.idle);
    let mut bad = Some(RawSocket::connect(&f.app.address, &path).await);
    // Wrong replies are collected so one server bug does not hide the cases after it.
    let mut wrong = Vec::new();
    for (name, send, expect) in cases(&f) {
        let before = f.snapshot().await;
        let socket = match bad.as_mut() {
            Some(socket) => socket,
            None => bad.insert(RawSocket::connect(&f.app.address, &path).await),
        };
        send_case(socket, send).await;
        let reply = match &expect {
            Expect::Error(_) => match socket.next_json().await {
                Some(frame) => Reply::Frame(frame),
                None => Reply::Closed(None),
            },
            Expect::Close(_) => Reply::Closed(socket.close_code().await),
        };
        let fits = match (&expect, &reply) {
            (Expect::Error(code), Reply::Frame(frame)) => {
                frame["kind"] == "error"
                    && frame["code"] == *code
                    && frame["message"].as_str().is_some_and(|m| !m.is_empty())
            }
            (Expect::Close(codes), Reply::Closed(Some(code))) => codes.contains(code),
            _ => false,
        };
        println!("faults/bad_frames: {name}: {reply:?}");
        if !fits {
            wrong.push(format!("{name}: got {reply:?}, expected {expect:?}"));
        }
        if matches!(reply, Reply::Closed(_)) {
            bad = None;
        }
        assert_eq!(f.snapshot().await, before, "{name}: the logs changed");
        let events = f.liveness().await;
        if let Some(socket) = bad.as_mut() {
            // The socket that sent the bad frame still follows the session.
            let last = events.last().unwrap().0;
            while socket
                .next_json()
                .await
                .unwrap_or_else(|| panic!("{name}: closed"))["seq"]
                != last
            {}
        }
    }
    f.finish().await;
    assert!(wrong.is_empty(), "wrong replies:\n{}", wrong.join("\n"));
}

/// What the server did about a bad frame.
#[derive(Debug)]
enum Reply {
    Frame(Value),
    Closed(Option<u16>),
}

async fn send_case(socket: &mut RawSocket, send: Send) {
    match send {
        Send::Text(text) => socket.send_frame(true, TEXT, text.as_bytes(), true).await,
        Send::Binary(bytes) => socket.send_frame(true, BINARY, &bytes, true).await,
        Send::RawText(bytes) => socket.send_frame(true, TEXT, &bytes, true).await,
        Send::Fragments(parts) => {
            for (i, part) in parts.iter().enumerate() {
                let opcode = if i == 0 { TEXT } else { CONTINUATION };
                let last = i + 1 == parts.len();
                socket.send_frame(last, opcode, part, true).await;
            }
        }
        Send::StrayContinuation => socket.send_frame(true, CONTINUATION, b"{}", true).await,
        Send::Unmasked(text) => socket.send_frame(true, TEXT, text.as_bytes(), false).await,
    }
}
