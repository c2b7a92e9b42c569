//! Retention deletes finished sessions past the age with their events, and never a
//! session that waits for a person.

use std::time::Duration;

use serde_json::json;
use tandem::eventlog::Hub;
use tandem::store::{Store, UseStore};

use crate::helpers::socket::interrupt_id;
use crate::helpers::{start, test_config, write_script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_sessions_go_and_waiting_ones_stay() {
    let (dir, url) = crate::helpers::fresh_database();
    let script = write_script(
        dir.path(),
        json!([
            {"toolCalls": [{"name": "request_input", "arguments": {"prompt": "Name?", "kind": "text"}}]},
            {"text": "Thanks."}
        ]),
    );
    let app = start(test_config(&url, &script, &[])).await;
    let (finished, mut socket) = app.open_session().await;
    app.say(&finished, "hi").await;
    let first = interrupt_id(&socket.until_run_end().await);
    let answer = json!({"status": "resolved", "payload": {"text": "Ada"}});
    let path = format!("/api/sessions/{finished}/interrupts/{first}");
    assert_eq!(app.post(&path, answer).await.0, 202);
    socket.until_run_end().await;
    let (waiting, mut waiting_socket) = app.open_session().await;
    app.say(&waiting, "ask me").await;
    let id = interrupt_id(&waiting_socket.until_run_end().await);
    let empty = app.create_session().await;

    let options = tandem::store::StoreOptions::default();
    let sweep = |age| tandem::store::open(&url, &options, Sweep(age));
    let deleted = sweep(Duration::ZERO).await.unwrap();
    assert_eq!(deleted, 2, "the finished and the empty session");
    for gone in [&finished, &empty] {
        let (status, _) = app.get(&format!("/api/sessions/{gone}")).await;
        assert_eq!(status, 404);
    }
    let (status, _) = app
        .post(
            &format!("/api/sessions/{waiting}/interrupts/{id}"),
            json!({"status": "resolved", "payload": {"text": "Ada"}}),
        )
        .await;
    assert_eq!(status, 202, "the waiting session is still answerable");
    let resumed = waiting_socket.until_run_end().await;
    assert_eq!(resumed.last().unwrap().1.type_name(), "RUN_FINISHED");
    let kept = sweep(Duration::from_secs(3600)).await.unwrap();
    assert_eq!(kept, 0, "the remaining session was updated just now");
}

/// One retention sweep of sessions older than the age, on whichever backend runs.
struct Sweep(Duration);

impl UseStore for Sweep {
    type Output = usize;

    async fn with<S: Store>(self, store: std::sync::Arc<S>) -> usize {
        let swept = tandem::retention::sweep(&*store, &Hub::default(), self.0).await;
        swept.unwrap()
    }
}
