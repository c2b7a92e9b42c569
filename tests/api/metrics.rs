//! `GET /metrics`: every family is `tandem_…` (or the GenAI conventions' `gen_ai_client_…`),
//! and each value moves when its thing
//! happens (and the gauges come back down). The binary runs as a child process so its
//! registry holds this test's work only.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};
use shared::EventBody;

use crate::helpers::child::Tandem;
use crate::helpers::provider::{ProviderServer, Reply};
use crate::helpers::socket::interrupt_id;
use crate::helpers::{fresh_database, write_script, Socket, TestApp};

const PATIENCE: Duration = Duration::from_secs(10);

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
        let conventions = name.starts_with("gen_ai_client_");
        assert!(name.starts_with("tandem_") || conventions, "{line}");
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
    let fails_once = vec![status(500), status(204)];
    let receiver = ProviderServer::start(fails_once).await;
    let secret = dir.path().join("webhook-secret");
    std::fs::write(&secret, "s3cr3t").unwrap();
    let hook = format!("{}/hook", receiver.url);
    let flags = [
        "--token-delay-ms",
        "0",
        "--webhook-url",
        &hook,
        "--webhook-retry-ms",
        "10",
    ];
    let secret_flag = ["--webhook-secret-file", secret.to_str().unwrap()];
    let tandem = Tandem::spawn_with(&url, &script, &[&flags[..], &secret_flag].concat());
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

    // The waiting session is announced: one attempt to retry, then one delivered.
    assert!(tandem.logged("webhook delivered", PATIENCE).await);
    let now = scrape(&app).await;
    let attempts =
        |outcome: &str| format!("tandem_webhook_attempts_total{{outcome=\"{outcome}\"}}");
    assert_eq!(get(&now, &attempts("retry")), 1.0, "{now:?}");
    assert_eq!(get(&now, &attempts("delivered")), 1.0, "{now:?}");

    let interrupt = interrupt_id(&paused);
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
    // The GenAI conventions' histograms: one observation a call.
    let call = r#"gen_ai_operation_name="chat",gen_ai_provider_name="script",gen_ai_request_model="script (3 turns)""#;
    let durations =
        format!(r#"gen_ai_client_operation_duration_seconds_count{{{call},error_type=""}}"#);
    assert_eq!(get(&now, &durations), 2.0, "{now:?}");
    let tokens = format!(r#"gen_ai_client_token_usage_sum{{{call},gen_ai_token_type="input"}}"#);
    assert_eq!(get(&now, &tokens), 200.0, "{now:?}");

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
    assert!(tandem.logged_times("socket ended", 2, PATIENCE).await);
    assert_eq!(get(&scrape(&app).await, "tandem_sockets_live"), 0.0);
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

fn status(code: u16) -> Reply {
    Reply::Status {
        status: code,
        headers: Vec::new(),
        body: "{}".into(),
    }
}

fn ask(timeout_seconds: Option<u64>) -> Value {
    let mut arguments = json!({"prompt": "Name?", "kind": "text"});
    if let Some(seconds) = timeout_seconds {
        arguments["timeoutSeconds"] = json!(seconds);
    }
    json!({"toolCalls": [{"name": "request_input", "arguments": arguments}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_by_every_outcome_and_stopped_runs_are_counted() {
    let long = "word ".repeat(2_000);
    let turns =
        json!([ask(Some(1)), {"text": "Nobody."}, ask(None), {"text": "Fine."}, {"text": long}]);
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), turns);
    let tandem = Tandem::spawn_with(&url, &script, &["--token-delay-ms", "5"]);
    let app = tandem.client();
    let (session, mut socket) = app.open_session().await;
    let answers = |outcome: &str| format!("tandem_answers_total{{outcome=\"{outcome}\"}}");

    // Nobody answers within the second: the server expires it, and an answer after that
    // is too late.
    app.say(&session, "ask with a deadline").await;
    let expiring = interrupt_id(&socket.until_run_end().await);
    socket.until_run_end().await;
    let path = format!("/api/sessions/{session}/interrupts/{expiring}");
    let late = json!({"status": "resolved", "payload": {"text": "Ada"}});
    assert_eq!(app.post(&path, late).await.0, 410);

    // Cancelled by the person.
    app.say(&session, "ask again").await;
    let cancelled = interrupt_id(&socket.until_run_end().await);
    let path = format!("/api/sessions/{session}/interrupts/{cancelled}");
    assert_eq!(app.post(&path, json!({"status": "cancelled"})).await.0, 202);
    socket.until_run_end().await;
    let now = scrape(&app).await;
    assert_eq!(get(&now, &answers("expired")), 1.0, "{now:?}");
    assert_eq!(get(&now, &answers("too_late")), 1.0, "{now:?}");
    assert_eq!(get(&now, &answers("cancelled")), 1.0, "{now:?}");
    assert_eq!(get(&now, "tandem_interrupts_waiting"), 0.0);

    // Stopped while it streams.
    app.say(&session, "talk").await;
    let streaming = |e: &shared::Event| matches!(&e.body, EventBody::TextMessageContent { .. });
    socket.until(streaming).await;
    let (code, body) = app
        .post(&format!("/api/sessions/{session}/cancel"), json!({}))
        .await;
    assert_eq!(code, 202, "{body}");
    socket.until_run_end().await;
    let now = scrape(&app).await;
    let cancelled_runs = "tandem_runs_finished_total{outcome=\"cancelled\"}";
    assert_eq!(get(&now, cancelled_runs), 1.0, "{now:?}");
    assert_eq!(get(&now, "tandem_runs_started_total"), 5.0, "{now:?}");
}
