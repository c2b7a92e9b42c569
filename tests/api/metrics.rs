//! `GET /metrics`: every family is `tandem_…`, and each value moves when its thing
//! happens. The binary runs as a child process so its registry holds this test's work only.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use crate::helpers::child::Tandem;
use crate::helpers::{fresh_database, write_script, Socket, TestApp};

/// The samples of a scrape: `name{labels}` → value.
async fn scrape(app: &TestApp) -> BTreeMap<String, f64> {
    let response = app.http.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let kind = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    let text = response.text().await.unwrap();
    assert!(text.ends_with("# EOF\n"));
    let mut samples = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (name, value) = line.rsplit_once(' ').unwrap();
        assert!(name.starts_with("tandem_"), "{line}");
        samples.insert(name.to_string(), value.parse().unwrap());
    }
    samples
}

fn get(samples: &BTreeMap<String, f64>, name: &str) -> f64 {
    samples.get(name).copied().unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_family_moves_when_its_thing_happens() {
    let usage = json!({"model": "m1", "inputTokens": 100, "outputTokens": 7});
    let word = format!("{} ", "w".repeat(400));
    let turns = json!([
        {"toolCalls": [{"name": "request_input", "arguments": {"prompt": "Name?", "kind": "text"}}], "usage": usage},
        {"text": "Thanks.", "usage": usage},
        {"text": word.repeat(15_000)},
    ]);
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), turns);
    let tandem = Tandem::spawn_with(&url, &script, &["--token-delay-ms", "0"]);
    let app = tandem.client();
    let before = scrape(&app).await;
    assert_eq!(get(&before, "tandem_runs_started_total"), 0.0);

    let (session, mut socket) = app.open_session().await;
    app.say(&session, "hi").await;
    let paused = socket.until_run_end().await;
    let now = scrape(&app).await;
    assert_eq!(get(&now, "tandem_sockets_live"), 1.0);
    assert_eq!(get(&now, "tandem_runs_started_total"), 1.0);
    assert_eq!(
        get(&now, "tandem_runs_finished_total{outcome=\"interrupt\"}"),
        1.0
    );
    assert_eq!(get(&now, "tandem_interrupts_waiting"), 1.0);
    assert_eq!(
        get(&now, "tandem_events_appended_total"),
        paused.len() as f64
    );
    assert!(get(&now, "tandem_commit_duration_seconds_count") >= 1.0);
    assert!(get(&now, "tandem_commit_batch_events_sum") == paused.len() as f64);
    let script_model = now
        .keys()
        .find(|k| k.starts_with("tandem_model_call_duration_seconds_count{"))
        .expect("a model call was timed")
        .clone();
    assert!(
        script_model.contains("provider=\"script\""),
        "{script_model}"
    );
    assert_eq!(get(&now, &script_model), 1.0);

    let interrupt = crate::helpers::socket::interrupt_id(&paused);
    let answer = json!({"status": "resolved", "payload": {"text": "Ada"}});
    let path = format!("/api/sessions/{session}/interrupts/{interrupt}");
    assert_eq!(app.post(&path, answer.clone()).await.0, 202);
    socket.until_run_end().await;
    assert_eq!(
        app.post(&path, answer).await.0,
        200,
        "the same answer again"
    );
    let wrong = json!({"status": "resolved", "payload": {"text": "Bob"}});
    assert_eq!(app.post(&path, wrong).await.0, 409);
    let now = scrape(&app).await;
    assert_eq!(get(&now, "tandem_answers_total{outcome=\"resolved\"}"), 1.0);
    assert_eq!(get(&now, "tandem_answers_total{outcome=\"repeated\"}"), 1.0);
    assert_eq!(get(&now, "tandem_answers_total{outcome=\"refused\"}"), 1.0);
    assert_eq!(get(&now, "tandem_interrupts_waiting"), 0.0);
    assert_eq!(
        get(&now, "tandem_runs_finished_total{outcome=\"success\"}"),
        1.0
    );
    assert_eq!(get(&now, &script_model), 2.0);
    let input =
        "tandem_model_tokens_total{provider=\"script\",model=\"script (3 turns)\",kind=\"input\"}";
    assert_eq!(get(&now, input), 200.0, "{now:?}");

    // A viewer that stops reading falls behind the live feed and catches up from the log.
    let url = format!("ws://{}/api/sessions/{session}/ws?after=0", app.address);
    let mut slow = Socket::connect_slow(&url).await;
    slow.backlog().await;
    app.say(&session, "a lot").await;
    socket.until_run_end().await;
    slow.until_run_end().await;
    let now = scrape(&app).await;
    assert!(
        get(&now, "tandem_sockets_caught_up_from_log_total") >= 1.0,
        "{now:?}"
    );
    assert_eq!(get(&now, "tandem_sockets_live"), 2.0);
    slow.close().await;
    socket.close().await;
    assert!(tandem.logged("run ended", Duration::from_secs(5)).await);

    app.say(&session, "one more").await;
    let mut socket = app
        .socket(&session, app.log(&session).await.len() as u64 - 1)
        .await;
    socket.until_run_end().await;
    let now = scrape(&app).await;
    assert_eq!(
        get(
            &now,
            "tandem_provider_errors_total{provider=\"script\",code=\"script_exhausted\"}"
        ),
        1.0
    );
    assert_eq!(
        get(&now, "tandem_runs_finished_total{outcome=\"error\"}"),
        1.0
    );
}
