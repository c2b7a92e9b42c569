//! Who may do what: authentication, isolation between users, and the edge's refusals.
//!
//! - [`routes`]: every entry of the route table, generated: no credentials and a bad
//!   token get 401; another user's session behaves exactly like an unknown one; the
//!   owner gets through. A route without a case fails the suite.
//! - [`sign_in`]: the page's cookie: sign-in, use, sign-out, expiry of a revoked user.
//! - [`edge`]: foreign `Host` (DNS rebinding) and `Origin` (CSRF, socket hijacking).
//! - [`endings`]: sockets close the moment their credential ends (revoke, sign-out,
//!   expiry, a deleted share link).

mod edge;
mod endings;
mod routes;
mod sign_in;

use serde_json::{json, Value};

use crate::helpers::{spawn_app_with_users, TestApp};

/// A script whose every session pauses on a question after its first message.
fn asking_script() -> Value {
    json!([{"toolCalls": [{"name": "request_input",
        "arguments": {"prompt": "Your name?", "kind": "text"}}]}])
}

/// Alice and Bob on one app.
async fn alice_and_bob() -> (TestApp, TestApp) {
    // Alice may read everyone's feedback (`GET /api/feedback`), so every route has an owner.
    let flags = ["--operators", "alice"];
    let mut users = spawn_app_with_users(asking_script(), &flags, &["alice", "bob"]).await;
    let bob = users.pop().unwrap();
    (users.pop().unwrap(), bob)
}

/// A session of `user` paused on a question; returns its id and the interrupt id.
async fn paused_session(user: &TestApp) -> (String, String) {
    let (session, mut socket) = user.open_session().await;
    user.say(&session, "hello").await;
    let events = socket.until_run_end().await;
    (session, crate::helpers::socket::interrupt_id(&events))
}
