//! Bad REST bodies on every endpoint that takes one, table-driven, beyond what `rest.rs`
//! and `interrupts.rs` cover: each gets its documented status and
//! `{"error":{code,message}}`, leaves both logs and the session list byte-identical, and
//! the open viewers keep receiving events. Bad ids and queries are in `bad_paths`.

use reqwest::Method;
use serde_json::{json, Value};

use super::fixture::{fixture, Fixture};

/// What a request must get: status and error code.
pub type Expect = (u16, &'static str);

pub const BAD: Expect = (400, "bad_request");
const TOO_LARGE: Expect = (413, "payload_too_large");
const INVALID_MESSAGE: Expect = (422, "invalid_message");
const INVALID_PAYLOAD: Expect = (422, "invalid_payload");
pub const NOT_FOUND: Expect = (404, "interrupt_not_found");

/// One body and what it must get.
type Row = (&'static str, Option<Vec<u8>>, Expect);

fn nested(depth: usize) -> String {
    "[".repeat(depth) + &"]".repeat(depth)
}

/// A body from raw text.
fn t(text: impl Into<String>) -> Option<Vec<u8>> {
    Some(text.into().into_bytes())
}

/// A body from JSON.
fn j(value: Value) -> Option<Vec<u8>> {
    t(value.to_string())
}

/// A JSON body whose last string, after `prefix`, is invalid UTF-8.
fn bad_utf8(prefix: &str) -> Option<Vec<u8>> {
    Some([prefix.as_bytes(), b"\"\xff\xfe\"}"].concat())
}

/// Over the 64 KiB body limit.
fn huge() -> String {
    "x".repeat(70 * 1024)
}

fn create_rows() -> Vec<Row> {
    vec![
        ("title of the wrong type", j(json!({"title": 5})), BAD),
        (
            "title over 200 chars",
            j(json!({"title": "t".repeat(201)})),
            BAD,
        ),
        ("blank title", j(json!({"title": "   "})), BAD),
        ("unknown field", j(json!({"name": "x"})), BAD),
        ("truncated JSON", t(r#"{"title":"#), BAD),
        ("JSON null", t("null"), BAD),
        ("10,000 nested arrays", t(nested(10_000)), BAD),
        ("invalid UTF-8", bad_utf8(r#"{"title":"#), BAD),
        ("body over 64 KiB", j(json!({"title": huge()})), TOO_LARGE),
    ]
}

fn message_rows() -> Vec<Row> {
    let nested_text = format!(r#"{{"text":{}}}"#, nested(10_000));
    vec![
        ("text of the wrong type", j(json!({"text": ["hi"]})), BAD),
        (
            "numeric clientMessageId",
            j(json!({"text": "hi", "clientMessageId": 5})),
            BAD,
        ),
        (
            "a socket frame",
            j(json!({"kind": "user_message", "text": "hi"})),
            BAD,
        ),
        ("no body", None, BAD),
        ("10,000 nested arrays as text", t(nested_text), BAD),
        ("invalid UTF-8", bad_utf8(r#"{"text":"#), BAD),
        (
            "over 32 KiB in bytes, not chars",
            j(json!({"text": "é".repeat(16_400)})),
            INVALID_MESSAGE,
        ),
        (
            "clientMessageId over 128 bytes",
            j(json!({"text": "hi", "clientMessageId": "c".repeat(129)})),
            INVALID_MESSAGE,
        ),
        (
            "valid JSON over 64 KiB",
            j(json!({"text": huge()})),
            TOO_LARGE,
        ),
    ]
}

fn answer_rows(f: &Fixture) -> Vec<Row> {
    let answer = |payload: Value| j(json!({"status": "resolved", "payload": payload}));
    let nested_payload = format!(r#"{{"status":"resolved","payload":{}}}"#, nested(10_000));
    let other_id =
        json!({"interruptId": f.answered, "status": "resolved", "payload": {"text": "x"}});
    vec![
        ("status of the wrong type", j(json!({"status": 5})), BAD),
        ("unknown status", j(json!({"status": "maybe"})), BAD),
        (
            "unknown field",
            j(json!({"status": "cancelled", "extra": 1})),
            BAD,
        ),
        ("interruptId differs from the path", j(other_id), BAD),
        (
            "truncated JSON",
            t(r#"{"status":"resolved","payload":{"#),
            BAD,
        ),
        ("payload of 10,000 nested arrays", t(nested_payload), BAD),
        (
            "invalid UTF-8",
            bad_utf8(r#"{"status":"resolved","payload":{"text":"#),
            BAD,
        ),
        (
            "body over 64 KiB",
            answer(json!({"text": huge()})),
            TOO_LARGE,
        ),
        (
            "payload of the wrong type",
            answer(json!("Ada")),
            INVALID_PAYLOAD,
        ),
        (
            "payload without its field",
            answer(json!({})),
            INVALID_PAYLOAD,
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_rest_bodies_get_the_documented_error_and_change_nothing() {
    let mut f = fixture().await;
    let messages = format!("/api/sessions/{}/messages", f.idle);
    let answer = format!("/api/sessions/{}/interrupts/{}", f.paused, f.pending);
    let tables = [
        ("/api/sessions".to_string(), create_rows()),
        (messages, message_rows()),
        (answer, answer_rows(&f)),
    ];
    for (path, rows) in tables {
        for (name, body, expect) in rows {
            let what = format!("POST {path}: {name}");
            expect_refusal(&mut f, Method::POST, &path, body, expect, &what).await;
        }
    }
    f.finish().await;
}

/// Sends one bad request; checks its error, that nothing changed, and that the viewers
/// still receive events.
pub async fn expect_refusal(
    f: &mut Fixture,
    method: Method,
    path: &str,
    body: Option<Vec<u8>>,
    (status, code): Expect,
    what: &str,
) {
    let before = f.snapshot().await;
    let mut request = f.app.http.request(method, f.app.url(path));
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body);
    }
    let response = request.send().await.unwrap();
    let got = response.status().as_u16();
    let reply: Value = response.json().await.unwrap_or(Value::Null);
    let error = &reply["error"];
    assert_eq!(
        (got, error["code"].as_str()),
        (status, Some(code)),
        "{what}: {reply}"
    );
    let message = error["message"].as_str();
    assert!(message.is_some_and(|m| !m.is_empty()), "{what}: {reply}");
    assert_eq!(
        f.snapshot().await,
        before,
        "{what}: the logs or sessions changed"
    );
    f.liveness().await;
}
