//! `--webhook-events feedback`: a person's rating of an answer is announced with its run,
//! rating, comment and who gave it, signed like every delivery.

use super::{asking, flags, hook, reply, spawn, verify, PATIENCE};
use crate::helpers::fresh_database;
use crate::helpers::provider::ProviderServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rating_is_announced_when_asked_for() {
    let (dir, url) = fresh_database();
    let mut receiver = ProviderServer::start(vec![reply(204); 2]).await;
    let flags = flags(
        dir.path(),
        &[hook(&receiver)],
        &["--webhook-events", "feedback"],
    );
    let tandem = spawn(dir.path(), &url, asking(), &flags);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    let run = app.say(&session, "release").await;
    socket.until_run_end().await;
    let path = format!("/api/sessions/{session}/runs/{run}/feedback");
    let rating = serde_json::json!({"rating": "down", "comment": "Too hasty"});
    let (status, body) = app.post(&path, rating).await;
    assert_eq!(status, 200, "{body}");
    receiver.received(1).await;
    let requests = receiver.requests();
    assert_eq!(
        requests.len(),
        1,
        "no session.waiting: only feedback is asked for"
    );
    let request = &requests[0];
    assert_eq!(request.header("x-tandem-event"), Some("feedback"));
    verify(request);
    assert_eq!(
        request.body["feedback"],
        serde_json::json!({"runId": run, "rating": "down", "comment": "Too hasty", "user": "local"})
    );
    assert_eq!(request.body["session"]["id"], session.as_str());
    assert!(tandem.logged_times("webhook delivered", 1, PATIENCE).await);
}
