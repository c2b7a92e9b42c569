//! Sockets end the moment the credential they were opened with ends: a revoke (from the
//! shell, another process), a sign-out, a sign-in's expiry, a deleted share link. They
//! close with 1008 and a reason, others' sockets stay, and a frame sent in the instant
//! before the close starts nothing. The heartbeat is set to ten minutes, so no close
//! here can come from it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem::domain::{now_ms, SessionId, TokenHash};
use tandem::store::{Store, UseStore};

use super::sign_in::sign_in;
use crate::helpers::socket::Socket;
use crate::helpers::{
    add_users, fresh_database, start, test_config, write_script, TestApp, TestDir,
};

/// Heartbeats too rare to close anything during a test.
const NO_HEARTBEAT: &[&str] = &[
    "--heartbeat-interval-ms",
    "600000",
    "--client-timeout-ms",
    "1200000",
];

/// An app with `--auth token`, users `carol` and `dave`, and its database URL.
async fn carol_and_dave() -> (TestApp, TestApp, String, TestDir) {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), json!([{"text": "Hello."}]));
    let flags = [&["--auth", "token"], NO_HEARTBEAT].concat();
    let app = start(test_config(&url, &script, &flags)).await;
    let tokens = add_users(&url, &["carol", "dave"]).await;
    let (carol, dave) = (app.as_user(&tokens[0]), app.as_user(&tokens[1]));
    (carol, dave, url, dir)
}

/// Runs `tandem users revoke NAME` against the database, as the shell would.
async fn revoke(url: &str, name: &str) {
    let revoke = tandem::auth::cli::UsersOn(
        tandem::auth::cli::UsersCommand::Revoke { name: name.into() },
        Default::default(),
    );
    tandem::store::open(url, &Default::default(), revoke)
        .await
        .unwrap()
        .unwrap();
}

/// A socket on `session` opened with the sign-in cookie `cookie` (`name=value`), past
/// its backlog.
async fn cookie_socket(app: &TestApp, session: &str, cookie: &str) -> Socket {
    let path = format!("/api/sessions/{session}/ws?after=0");
    let mut socket = app
        .anonymous()
        .try_socket_at(&path, &[("cookie", cookie)])
        .await
        .unwrap();
    socket.backlog().await;
    socket
}

/// A share link of `session` that hides nothing; returns its secret.
async fn share(owner: &TestApp, session: &str) -> String {
    let (status, share) = owner
        .post(&format!("/api/sessions/{session}/shares"), json!({}))
        .await;
    assert_eq!(status, 201, "{share}");
    share["token"].as_str().unwrap().to_string()
}

/// The events the database holds for a session, read directly (its owner may no longer
/// be able to read them over the API).
struct EventsOf(String);

impl UseStore for EventsOf {
    type Output = Vec<Value>;

    async fn with<S: Store>(self, store: Arc<S>) -> Vec<Value> {
        let session = SessionId::parse(&self.0).unwrap();
        let rows = store.events_after(session, 0, 10_000).await.unwrap();
        rows.iter()
            .map(|row| serde_json::from_str(&row.json).unwrap())
            .collect()
    }
}

/// Records a sign-in of `user` directly, valid for `ttl`; gives the cookie to send.
struct SignInFor(String, Duration);

impl UseStore for SignInFor {
    type Output = String;

    async fn with<S: Store>(self, store: Arc<S>) -> String {
        let user = store
            .list_users()
            .await
            .unwrap()
            .into_iter()
            .find(|user| user.name.as_str() == self.0)
            .unwrap();
        let value = format!("tdc_{}", uuid::Uuid::new_v4().simple());
        let now = now_ms();
        let expires = now + self.1.as_millis() as i64;
        let hash = TokenHash::of(&value);
        store
            .create_sign_in(hash, user.id, now, expires)
            .await
            .unwrap();
        format!("{}={value}", tandem::auth::sign_in::COOKIE_NAME)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_a_user_closes_every_socket_that_relied_on_them_at_once() {
    let (carol, dave, url, _dir) = carol_and_dave().await;
    let (_, _, cookie) = sign_in(&carol, carol.token.as_deref().unwrap()).await;
    let (session, mut by_token) = carol.open_session().await;
    let mut by_cookie = cookie_socket(&carol, &session, &cookie).await;
    let link = share(&carol, &session).await;
    let mut viewer = carol.anonymous().try_shared_socket(&link, 0).await.unwrap();
    viewer.backlog().await;
    let (dave_session, mut dave_socket) = dave.open_session().await;

    let revoked_at = Instant::now();
    revoke(&url, "carol").await;
    assert_eq!(
        by_token.closed().await,
        (Some(1008), "this user was revoked".into())
    );
    assert_eq!(
        by_cookie.closed().await,
        (Some(1008), "this user was revoked".into())
    );
    assert_eq!(
        viewer.closed().await,
        (Some(1008), "this share link's owner was revoked".into())
    );
    println!("closed {:?} after the revoke", revoked_at.elapsed());

    // Another user's socket is untouched.
    dave.say(&dave_session, "still here?").await;
    let run = dave_socket.until_run_end().await;
    assert_eq!(run.last().unwrap().1.type_name(), "RUN_FINISHED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_sent_by_a_revoked_users_socket_starts_nothing() {
    let (carol, _dave, url, _dir) = carol_and_dave().await;
    let (session, mut socket) = carol.open_session().await;
    revoke(&url, "carol").await;
    // Sent before the socket has heard of the revoke: it is checked before it acts.
    socket
        .send(json!({"type": "user_message", "text": "start a run anyway"}))
        .await;
    assert_eq!(socket.closed().await.0, Some(1008));
    let events = tandem::store::open(&url, &Default::default(), EventsOf(session))
        .await
        .unwrap();
    assert!(
        events.iter().all(|event| event["type"] != "RUN_STARTED"),
        "no run started: {events:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_out_closes_the_sockets_of_that_sign_in_and_no_others() {
    let (carol, _dave, _url, _dir) = carol_and_dave().await;
    let token = carol.token.clone().unwrap();
    let (_, _, leaving) = sign_in(&carol, &token).await;
    let (_, _, staying) = sign_in(&carol, &token).await;
    let (session, mut by_token) = carol.open_session().await;
    let mut signed_out = cookie_socket(&carol, &session, &leaving).await;
    let mut other_browser = cookie_socket(&carol, &session, &staying).await;

    let response = reqwest::Client::new()
        .post(carol.url("/api/auth/logout"))
        .header("cookie", &leaving)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    assert_eq!(signed_out.closed().await, (Some(1008), "signed out".into()));

    carol.say(&session, "who is still watching?").await;
    for socket in [&mut by_token, &mut other_browser] {
        let run = socket.until_run_end().await;
        assert_eq!(run.last().unwrap().1.type_name(), "RUN_FINISHED");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_closes_when_its_sign_in_expires() {
    let (carol, _dave, url, _dir) = carol_and_dave().await;
    let session = carol.create_session().await;
    let ttl = Duration::from_millis(1500);
    let cookie = tandem::store::open(&url, &Default::default(), SignInFor("carol".into(), ttl))
        .await
        .unwrap();
    let opened = Instant::now();
    let mut socket = cookie_socket(&carol, &session, &cookie).await;
    assert_eq!(
        socket.closed().await,
        (Some(1008), "the sign-in expired".into())
    );
    assert!(
        opened.elapsed() >= ttl - Duration::from_millis(200),
        "closed at its expiry, not before: {:?}",
        opened.elapsed()
    );
    let (status, _) = crate::helpers::status_and_json(
        reqwest::Client::new()
            .get(carol.url("/api/sessions"))
            .header("cookie", &cookie),
    )
    .await;
    assert_eq!(status, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agui_stream_ends_when_its_user_is_revoked() {
    use futures_util::StreamExt;
    let (dir, url) = fresh_database();
    let long = json!([{"text": "word ".repeat(400)}]);
    let script = write_script(dir.path(), long);
    let flags = [&["--auth", "token", "--token-delay-ms", "5"], NO_HEARTBEAT].concat();
    let app = start(test_config(&url, &script, &flags)).await;
    let token = add_users(&url, &["carol"]).await.remove(0);
    let carol = app.as_user(&token);
    let thread = uuid::Uuid::new_v4().to_string();
    let input = json!({"threadId": thread, "runId": uuid::Uuid::new_v4().to_string(),
        "state": {}, "tools": [], "context": [], "forwardedProps": {},
        "messages": [{"id": "m1", "role": "user", "content": "talk for a while"}]});
    let response = carol
        .http
        .post(carol.url("/api/agui"))
        .header("accept", "text/event-stream")
        .json(&input)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    let mut seen = String::new();
    while !seen.contains("TEXT_MESSAGE_CONTENT") {
        let chunk = tokio::time::timeout(Duration::from_secs(20), body.next())
            .await
            .expect("the stream goes on")
            .expect("the stream is open")
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    revoke(&url, "carol").await;
    // The body ends (without the run's end) instead of streaming the rest.
    loop {
        let next = tokio::time::timeout(Duration::from_secs(20), body.next())
            .await
            .expect("the stream ends in time");
        match next {
            Some(Ok(chunk)) => seen.push_str(&String::from_utf8_lossy(&chunk)),
            Some(Err(_)) | None => break,
        }
    }
    assert!(
        !seen.contains("RUN_FINISHED"),
        "the stream stopped before the run's end"
    );
}
