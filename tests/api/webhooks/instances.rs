//! Two instances on one PostgreSQL database: each attempt of a delivery is made by one of
//! them (a claim), so the receiver gets one request per attempt and the count is right.

use std::time::Duration;

use super::{asking, deliveries, flags, hook, reply, spawn, PATIENCE};
use crate::helpers::child::Tandem;
use crate::helpers::fresh_postgres;
use crate::helpers::provider::ProviderServer;

/// Waits until one of `instances` has logged "webhook delivered" once more than `before`
/// said it had.
async fn one_more_delivered(instances: [&Tandem; 2], before: [usize; 2]) {
    const TEXT: &str = "webhook delivered";
    tokio::select! {
        logged = instances[0].logged_times(TEXT, before[0] + 1, PATIENCE) => assert!(logged),
        logged = instances[1].logged_times(TEXT, before[1] + 1, PATIENCE) => assert!(logged),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_make_each_attempt_once() {
    let (dir, url) = fresh_postgres();
    let replies = vec![reply(500), reply(500), reply(204), reply(204)];
    let mut receiver = ProviderServer::start(replies).await;
    let flags = flags(dir.path(), &[hook(&receiver)], &[]);
    let turns = serde_json::json!([asking()[0], asking()[0]]);
    let a = spawn(dir.path(), &url, turns.clone(), &flags);
    let b = spawn(dir.path(), &url, turns, &flags);
    let app = a.client();
    let (first, mut socket) = app.open_session().await;
    app.say(&first, "release").await;
    socket.until_run_end().await;
    receiver.received(3).await;
    one_more_delivered([&a, &b], [0, 0]).await;

    // A second delivery, through B: once it is made, the first has had every request
    // it will ever get.
    let text = "webhook delivered";
    let before = [a.count_logged(text), b.count_logged(text)];
    let app = b.client();
    let (second, mut socket) = app.open_session().await;
    app.say(&second, "release").await;
    socket.until_run_end().await;
    receiver.received(4).await;
    one_more_delivered([&a, &b], before).await;

    let requests = receiver.requests();
    let ids: Vec<&str> = requests
        .iter()
        .map(|r| r.header("x-tandem-delivery").unwrap())
        .collect();
    assert_eq!(ids.len(), 4, "one request per attempt: {ids:?}");
    assert_eq!(ids[..3], [ids[0]; 3], "{ids:?}");
    let attempts: Vec<u64> = requests[..3]
        .iter()
        .map(|r| r.body["attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(attempts, [1, 2, 3]);
    let delivery = &deliveries(&app, &first).await[0];
    assert_eq!(delivery["attempts"], 3, "{delivery}");
    assert_eq!(delivery["state"], "delivered", "{delivery}");
    // The waits still grow: no instance retried early.
    assert!(requests[1].at - requests[0].at >= Duration::from_millis(50));
}
