//! `--webhook-events waiting,run-ended`: each run's end is announced (paused, finished,
//! failed) with its run and outcome, beside the waiting session's own delivery.

use serde_json::Value;

use super::{asking, deliveries, flags, hook, reply, spawn, verify, PATIENCE};
use crate::helpers::fresh_database;
use crate::helpers::provider::{ProviderServer, Recorded};

/// The `run.ended` request about `run`.
fn ended<'a>(requests: &'a [Recorded], run: &str) -> &'a Value {
    let request = requests
        .iter()
        .find(|r| r.body["event"] == "run.ended" && r.body["run"]["runId"] == run)
        .unwrap_or_else(|| panic!("no run.ended for {run}"));
    assert_eq!(request.header("x-tandem-event"), Some("run.ended"));
    verify(request);
    &request.body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_run_end_is_announced_when_asked_for() {
    let (dir, url) = fresh_database();
    let mut receiver = ProviderServer::start(vec![reply(204); 4]).await;
    let events = ["--webhook-events", "waiting,run-ended"];
    let flags = flags(dir.path(), &[hook(&receiver)], &events);
    // Two turns: the question, the answer's reply; a third model call finds no turn.
    let tandem = spawn(dir.path(), &url, asking(), &flags);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    let paused = app.say(&session, "release").await;
    let interrupt = crate::helpers::socket::interrupt_id(&socket.until_run_end().await);
    receiver.received(2).await;
    let path = format!("/api/sessions/{session}/interrupts/{interrupt}");
    let answer = serde_json::json!({"status": "resolved", "payload": {"approved": true}});
    let (status, accepted) = app.post(&path, answer).await;
    assert_eq!(status, 202, "{accepted}");
    let finished = accepted["runId"].as_str().unwrap().to_string();
    socket.until_run_end().await;
    receiver.received(3).await;
    let failed = app.say(&session, "again").await;
    socket.until_run_end().await;
    receiver.received(4).await;

    let requests = receiver.requests();
    let waiting = requests
        .iter()
        .filter(|r| r.body["event"] == "session.waiting");
    assert_eq!(waiting.count(), 1, "the question, announced once");
    let body = ended(&requests, &paused);
    assert_eq!(body["run"]["outcome"], "interrupt");
    assert_eq!(body["session"]["id"], session.as_str());
    assert_eq!(
        body["session"]["link"],
        format!("https://tandem.example.com/#/sessions/{session}")
    );
    assert_eq!(ended(&requests, &finished)["run"]["outcome"], "success");
    let error = &ended(&requests, &failed)["run"];
    assert_eq!(error["outcome"], "error", "{error}");
    assert_eq!(error["error"]["code"], "script_exhausted", "{error}");

    assert!(tandem.logged_times("webhook delivered", 4, PATIENCE).await);
    let shown = deliveries(&app, &session).await;
    let runs: Vec<&str> = shown
        .iter()
        .filter(|d| d["event"] == "run.ended")
        .map(|d| d["runId"].as_str().unwrap())
        .collect();
    assert_eq!(runs.len(), 3, "{shown:?}");
    for run in [&paused, &finished, &failed] {
        assert!(runs.contains(&run.as_str()), "{run} in {runs:?}");
    }
    assert!(shown.iter().all(|d| d["state"] == "delivered"), "{shown:?}");
}
