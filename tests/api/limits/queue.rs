//! Concurrent runs: past `--max-concurrent-runs` a run waits its turn, recorded in the
//! log as `CUSTOM tandem.run_queued`; past `--max-queued-runs` new work gets 503; a
//! stopped waiter leaves the line; and the line survives a SIGKILL and restart. Users
//! take turns for freed slots, and one past their share of the queue gets 429.

use serde_json::{json, Value};
use shared::{Event, EventBody};

use super::long_text;
use crate::helpers::child::Tandem;
use crate::helpers::{
    assert_valid_session, spawn_app_with, spawn_app_with_users, write_script, Socket, TestApp,
};

/// The position of the run-queued marker among `events`, if there is one.
fn queued_position(events: &[(u64, Event)]) -> Option<u64> {
    events.iter().find_map(|(_, e)| match &e.body {
        EventBody::Custom { name, value } if name == shared::custom::RUN_QUEUED => {
            value["position"].as_u64()
        }
        _ => None,
    })
}

/// When the first event of `type_name` after `from` happened (ms).
fn time_of(events: &[(u64, Event)], type_name: &str, last: bool) -> i64 {
    let mut matching = events.iter().filter(|(_, e)| e.type_name() == type_name);
    let found = if last {
        matching.next_back()
    } else {
        matching.next()
    };
    found
        .map(|(_, e)| e.timestamp.unwrap_or_default())
        .expect(type_name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_past_the_limit_wait_in_line_and_a_full_line_is_refused() {
    let flags = [
        "--max-concurrent-runs",
        "1",
        "--max-queued-runs",
        "1",
        "--token-delay-ms",
        "10",
    ];
    let app = spawn_app_with(json!([long_text(40)]), &flags).await;
    let (a, mut a_socket) = app.open_session().await;
    let (b, mut b_socket) = app.open_session().await;
    let (c, mut c_socket) = app.open_session().await;
    app.say(&a, "first").await;
    app.say(&b, "second").await;
    let b_queued = b_socket
        .until(|e| matches!(&e.body, EventBody::Custom { .. }))
        .await;
    assert_eq!(queued_position(&b_queued), Some(1));

    let (status, body) = app
        .post(
            &format!("/api/sessions/{c}/messages"),
            json!({"text": "third"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (503, Some("saturated"))
    );

    assert_eq!(
        app.post(&format!("/api/sessions/{b}/cancel"), json!({}))
            .await
            .0,
        202
    );
    let b_end = b_socket.until_run_end().await;
    assert!(matches!(
        &b_end.last().unwrap().1.body,
        EventBody::RunFinished {
            outcome: Some(shared::Outcome::Cancelled),
            ..
        }
    ));
    assert!(
        b_end.iter().all(|(_, e)| e.type_name() != "STEP_STARTED"),
        "b never ran"
    );

    app.say(&c, "third").await;
    let c_events = c_socket.until_run_end().await;
    let a_events = a_socket.until_run_end().await;
    assert_eq!(
        queued_position(&c_events),
        Some(1),
        "c took the place b left"
    );
    assert!(
        time_of(&a_events, "RUN_FINISHED", true) <= time_of(&c_events, "STEP_STARTED", false),
        "c's model call started only once a's run had ended"
    );
    for session in [&a, &b, &c] {
        assert_valid_session(&app.log(session).await, true);
    }
}

async fn log_of(client: &crate::helpers::TestApp, session: &str) -> Vec<(u64, Event)> {
    client.log(session).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_line_survives_a_kill_and_every_run_finishes_once() {
    let (dir, url) = crate::helpers::fresh_database();
    // The running run's continuation is its second model call.
    let script = write_script(dir.path(), json!([long_text(80), {"text": "resumed"}]));
    let flags = ["--max-concurrent-runs", "1", "--token-delay-ms", "20"];
    let mut first = Tandem::spawn_with(&url, &script, &flags);
    let client = first.client();
    let mut sessions = Vec::new();
    for text in ["a", "b", "c"] {
        let (session, socket) = client.open_session().await;
        client.say(&session, text).await;
        sessions.push((session, socket));
    }
    let (_, c_socket) = &mut sessions[2];
    let c_queued = c_socket
        .until(|e| matches!(&e.body, EventBody::Custom { .. }))
        .await;
    assert_eq!(queued_position(&c_queued), Some(2));
    first.kill();

    let second = Tandem::spawn_with(&url, &script, &flags);
    let client = second.client();
    let mut logs: Vec<Vec<(u64, Event)>> = Vec::new();
    for (session, _) in &sessions {
        let mut socket = client.socket(session, 0).await;
        loop {
            let events = socket.until_run_end().await;
            if !matches!(events.last().unwrap().1.body, EventBody::RunFinished { .. }) {
                panic!("a run failed: {:?}", events.last());
            }
            let log = log_of(&client, session).await;
            let status: Value = client.get(&format!("/api/sessions/{session}")).await.1;
            if status["status"] == "idle" {
                logs.push(log);
                break;
            }
        }
    }
    for log in &logs {
        assert_valid_session(log, true);
        let finished = log
            .iter()
            .filter(|(_, e)| e.type_name() == "RUN_FINISHED")
            .count();
        assert_eq!(finished, 1, "one run, finished once");
    }
    let recovered = |log: &[(u64, Event)]| {
        log.iter().any(|(_, e)| {
            matches!(&e.body,
            EventBody::Custom { name, .. } if name == shared::custom::RUN_RECOVERED)
        })
    };
    assert!(
        recovered(&logs[0]),
        "the running one was repaired and continued"
    );
    assert!(
        !recovered(&logs[1]) && !recovered(&logs[2]),
        "queued ones just took their place"
    );
    assert!(
        time_of(&logs[1], "RUN_FINISHED", true) <= time_of(&logs[2], "STEP_STARTED", false),
        "b, queued before c, ran before it"
    );
}

/// When the first event of this run's model call happened (ms): its `STEP_STARTED`.
fn started(events: &[(u64, Event)]) -> i64 {
    time_of(events, "STEP_STARTED", false)
}

/// Waits until the run on `socket` has streamed at least `words` words of its answer.
async fn until_streamed(socket: &mut Socket, words: usize) {
    let mut streamed = 0;
    while streamed < words {
        let events = socket
            .until(|e| matches!(&e.body, EventBody::TextMessageContent { .. }))
            .await;
        streamed += events
            .iter()
            .map(|(_, e)| match &e.body {
                EventBody::TextMessageContent { delta, .. } => delta.split_whitespace().count(),
                _ => 0,
            })
            .sum::<usize>();
    }
}

/// Posts a message and returns the status, the error code and `Retry-After`.
async fn post_message(user: &TestApp, session: &str) -> (u16, Option<String>, Option<String>) {
    let response = user
        .http
        .post(user.url(&format!("/api/sessions/{session}/messages")))
        .json(&json!({"text": "one more"}))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|value| value.to_str().unwrap().to_string());
    let body: Value = response.json().await.unwrap();
    let code = body["error"]["code"].as_str().map(str::to_string);
    (status, code, retry_after)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_user_holds_another_users_run_back_for_one_freed_slot_only() {
    let flags = [
        "--max-concurrent-runs",
        "2",
        "--max-queued-runs-per-user",
        "10",
        "--token-delay-ms",
        "20",
    ];
    let users = spawn_app_with_users(json!([long_text(60)]), &flags, &["alice", "bob"]).await;
    let (alice, bob) = (&users[0], &users[1]);
    let mut flood = Vec::new();
    for _ in 0..12 {
        flood.push(alice.open_session().await);
    }
    let one_too_many = alice.create_session().await;
    let (bob_session, mut bob_socket) = bob.open_session().await;

    // Alice's first run is well under way before the rest of her flood, so her two
    // running runs free their slots at clearly different times.
    alice.say(&flood[0].0, "flood").await;
    until_streamed(&mut flood[0].1, 10).await;
    for (session, _) in &flood[1..] {
        alice.say(session, "flood").await;
    }
    assert_eq!(
        post_message(alice, &one_too_many).await,
        (429, Some("too_many_queued_runs".into()), Some("5".into())),
        "alice has her ten runs waiting: her share of the queue"
    );
    bob.say(&bob_session, "my turn").await;

    let bob_events = bob_socket.until_run_end().await;
    assert_eq!(queued_position(&bob_events), Some(1), "bob starts next");
    let mut alice_runs = Vec::new();
    for (session, mut socket) in flood {
        socket.until_run_end().await;
        alice_runs.push(alice.log(&session).await);
    }
    let (running, queued) = alice_runs.split_at(2);
    assert!(running.iter().all(|log| queued_position(log).is_none()));
    assert!(queued.iter().all(|log| queued_position(log).is_some()));
    let first_free = time_of(&running[0], "RUN_FINISHED", true);
    let second_free = time_of(&running[1], "RUN_FINISHED", true);
    let bob_started = started(&bob_events);
    assert!(
        first_free <= bob_started && bob_started < second_free,
        "bob's run took the first slot that freed ({first_free} <= {bob_started} < {second_free})"
    );
    for log in queued {
        assert!(
            started(log) >= second_free,
            "alice's queued runs waited for later slots"
        );
    }
    assert_valid_session(&bob.log(&bob_session).await, true);
}
