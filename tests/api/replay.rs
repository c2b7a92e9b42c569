//! Replay and fan-out: `after=` returns exactly the log's suffix, sockets agree, and the
//! backlog/live handover has no gap or duplicate while events are being committed.

use serde_json::json;

use crate::helpers::{spawn_app, spawn_app_with};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_returns_exactly_the_suffix_of_the_log() {
    let app = spawn_app(json!([{"reasoning": "a b c", "text": "one two three four"}])).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "hi").await;
    socket.until_run_end().await;
    let log = app.log(&session).await;
    for after in [
        0,
        1,
        7,
        log.len() as u64 - 1,
        log.len() as u64,
        log.len() as u64 + 5,
    ] {
        let mut late = app.socket(&session, after).await;
        let (backlog, caught_up) = late.backlog().await;
        let expected: Vec<_> = log
            .iter()
            .filter(|(seq, _)| *seq > after)
            .cloned()
            .collect();
        assert_eq!(backlog, expected, "after={after}");
        // An `after` beyond the log is clamped to it: the socket then follows new events.
        assert_eq!(caught_up, log.len() as u64);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sockets_joining_mid_run_see_identical_gapless_sequences() {
    let words = "tok ".repeat(300);
    let turns = json!([{"reasoning": words, "text": words}]);
    let app = spawn_app_with(turns, &["--token-delay-ms", "1"]).await;
    let (session, mut first) = app.open_session().await;
    app.say(&session, "stream please").await;
    // Join while the run is producing: after some events are committed, from seq 0.
    first
        .until(|e| e.type_name() == "REASONING_MESSAGE_CONTENT")
        .await;
    let mut joiners = Vec::new();
    for _ in 0..3 {
        joiners.push(app.socket(&session, 0).await);
        first
            .until(|e| e.type_name() == "REASONING_MESSAGE_CONTENT" || e.body.is_run_end())
            .await;
    }
    let mut sequences = Vec::new();
    for mut socket in joiners {
        let (mut seen, _) = socket.backlog().await;
        if !seen.last().is_some_and(|(_, e)| e.body.is_run_end()) {
            seen.extend(socket.until_run_end().await);
        }
        sequences.push(seen);
    }
    let log = app.log(&session).await;
    for seen in sequences {
        let seqs: Vec<u64> = seen.iter().map(|(s, _)| *s).collect();
        assert_eq!(
            seqs,
            (1..=log.len() as u64).collect::<Vec<_>>(),
            "no gap, no duplicate"
        );
        assert_eq!(seen, log);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewer_that_stops_reading_delays_nobody_and_catches_up_later() {
    // 15,000 words of 400 bytes: far more than the socket buffers hold, so the slow
    // viewer's frames back up in the server and its live feed lags.
    let word = format!("{} ", "w".repeat(400));
    let app = spawn_app(json!([{ "text": word.repeat(15_000) }])).await;
    let session = app.create_session().await;
    let url = format!("ws://{}/api/sessions/{session}/ws?after=0", app.address);
    let mut slow = crate::helpers::Socket::connect_slow(&url).await;
    slow.backlog().await;
    let mut fast = app.socket(&session, 0).await;
    fast.backlog().await;
    app.say(&session, "a lot").await;
    // The run and the other viewer finish while the slow viewer has read nothing.
    let seen_fast = fast.until_run_end().await;
    let (_, detail) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(detail["status"], "idle");
    let seen_slow = slow.until_run_end().await;
    let log = app.log(&session).await;
    // Joined deltas stop at 1 KiB: two words an event, still far more than a live feed holds.
    assert!(log.len() > 15_000 / 2, "{}", log.len());
    assert_eq!(seen_fast, log);
    assert_eq!(
        seen_slow, log,
        "the slow viewer gets everything, in order, once"
    );
}
