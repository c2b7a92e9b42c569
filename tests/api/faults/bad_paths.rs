//! Bad ids and queries on every entry point, table-driven: malformed and unknown session
//! ids, interrupt ids of another session, out-of-range and unknown query parameters,
//! and the same on the socket handshake, which refuses before upgrading. Each gets its
//! documented error and changes nothing (see [`expect_refusal`]).

use reqwest::Method;
use serde_json::{json, Value};

use super::bad_input::{expect_refusal, Expect, BAD, NOT_FOUND};
use super::fixture::fixture;

const NO_SESSION: Expect = (404, "session_not_found");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_ids_and_queries_get_the_documented_error_and_change_nothing() {
    let mut f = fixture().await;
    let unknown = uuid::Uuid::now_v7().to_string();
    let (paused, idle, pending) = (f.paused.clone(), f.idle.clone(), f.pending.clone());
    let hi = || Some(json!({"text": "hi"}).to_string().into_bytes());
    let cancelled = || Some(json!({"status": "cancelled"}).to_string().into_bytes());
    let resolved = || {
        Some(
            json!({"status": "resolved", "payload": {"text": "x"}})
                .to_string()
                .into_bytes(),
        )
    };
    let events = |query: &str| format!("/api/sessions/{idle}/events?{query}");
    let (post, get, delete) = (Method::POST, Method::GET, Method::DELETE);
    let rows: Vec<(Method, String, Option<Vec<u8>>, Expect)> = vec![
        (
            post.clone(),
            format!("/api/sessions/{unknown}/messages"),
            hi(),
            NO_SESSION,
        ),
        (
            post.clone(),
            format!("/api/sessions/{}/messages", "z".repeat(36)),
            hi(),
            BAD,
        ),
        (
            post.clone(),
            format!("/api/sessions/{}/messages", "a".repeat(2000)),
            hi(),
            BAD,
        ),
        (post.clone(), "/api/sessions/%00/messages".into(), hi(), BAD),
        (
            post.clone(),
            format!("/api/sessions/{idle}/interrupts/{pending}"),
            resolved(),
            NOT_FOUND,
        ),
        (
            post.clone(),
            format!("/api/sessions/{paused}/interrupts/{}", f.answered),
            resolved(),
            NOT_FOUND,
        ),
        (
            post.clone(),
            format!("/api/sessions/{unknown}/interrupts/{pending}"),
            cancelled(),
            NO_SESSION,
        ),
        (
            post.clone(),
            format!("/api/sessions/nope/interrupts/{pending}"),
            cancelled(),
            BAD,
        ),
        (
            post.clone(),
            format!("/api/sessions/{paused}/interrupts/{}", "i".repeat(5000)),
            cancelled(),
            NOT_FOUND,
        ),
        (
            post.clone(),
            format!("/api/sessions/{unknown}/cancel"),
            None,
            NO_SESSION,
        ),
        (post.clone(), "/api/sessions/nope/cancel".into(), None, BAD),
        (
            delete.clone(),
            format!("/api/sessions/{unknown}"),
            None,
            NO_SESSION,
        ),
        (delete.clone(), "/api/sessions/nope".into(), None, BAD),
        (get.clone(), events("after=abc"), None, BAD),
        (get.clone(), events("after=1.5"), None, BAD),
        (
            get.clone(),
            events("after=99999999999999999999999"),
            None,
            BAD,
        ),
        (get.clone(), events("limit=10001"), None, BAD),
        (get.clone(), events("limit=4294967296"), None, BAD),
        (get.clone(), events("limit=-5"), None, BAD),
        (get.clone(), events("after=0&from=3"), None, BAD),
        (
            get.clone(),
            format!("/api/sessions/{unknown}/events"),
            None,
            NO_SESSION,
        ),
        (get.clone(), "/api/sessions/nope/events".into(), None, BAD),
    ];
    for (method, path, body, expect) in rows {
        let what = format!("{method} {}", path.chars().take(120).collect::<String>());
        expect_refusal(&mut f, method, &path, body, expect, &what).await;
    }
    f.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_socket_handshakes_are_refused_before_the_upgrade() {
    let mut f = fixture().await;
    let before = f.snapshot().await;
    let idle = f.idle.clone();
    for query in [
        format!("{idle}/ws?after=abc"),
        format!("{idle}/ws?after=-1"),
        format!("{idle}/ws?after=1&follow=true"),
        "nope/ws".to_string(),
        format!("{}/ws", "z".repeat(36)),
    ] {
        let url = format!("ws://{}/api/sessions/{query}", f.app.address);
        match tokio_tungstenite::connect_async(url).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                assert_eq!(response.status(), 400, "{query}");
                let body = response.body().as_deref().unwrap_or_default();
                let body: Value = serde_json::from_slice(body).unwrap_or_default();
                assert_eq!(body["error"]["code"], "bad_request", "{query}: {body}");
            }
            other => panic!("{query}: expected a refusal, got {other:?}"),
        }
    }
    assert_eq!(f.snapshot().await, before);
    f.liveness().await;
    f.finish().await;
}
