//! What model calls cost: one `CUSTOM tandem.usage` per call, priced by `--prices`.

use clap::Parser;
use serde_json::{json, Value};
use shared::{EventBody, Outcome};

use crate::helpers::spawn_app_with;

/// A price file in a folder that lives as long as the test process.
pub fn price_file(prices: Value) -> String {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap());
    let path = dir
        .path()
        .join(format!("prices-{}.json", uuid::Uuid::new_v4().simple()));
    std::fs::write(&path, prices.to_string()).unwrap();
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_model_call_logs_its_usage_priced_from_the_table() {
    let turns = json!([
        {"toolCalls": [{"name": "calculator", "arguments": {"expression": "6*7"}}],
         "usage": {"provider": "openai", "model": "gpt-test-1", "inputTokens": 1000,
                   "cachedInputTokens": 400, "outputTokens": 100, "reasoningTokens": 20}},
        {"text": "42.", "usage": {"model": "unpriced-model", "inputTokens": 1200, "outputTokens": 5}},
    ]);
    let prices = price_file(json!({"gpt-test*": {"input": 2, "output": 10, "cachedInput": 0.5}}));
    let app = spawn_app_with(turns, &["--prices", &prices]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "What is 6*7?").await;
    let events = socket.until_run_end().await;

    let usage: Vec<(usize, &Value)> = events
        .iter()
        .enumerate()
        .filter_map(|(at, (_, event))| match &event.body {
            EventBody::Custom { name, value } if name == "tandem.usage" => Some((at, value)),
            _ => None,
        })
        .collect();
    assert_eq!(usage.len(), 2, "one per model call");
    for (at, _) in &usage {
        assert!(
            matches!(&events[at + 1].1.body, EventBody::StepFinished { .. }),
            "usage comes right before its call's STEP_FINISHED"
        );
    }
    let first = usage[0].1;
    assert_eq!(first["model"], "gpt-test-1");
    assert_eq!(
        (
            &first["inputTokens"],
            &first["cachedInputTokens"],
            &first["outputTokens"],
            &first["reasoningTokens"]
        ),
        (&json!(1000), &json!(400), &json!(100), &json!(20))
    );
    // 600 fresh × $2 + 400 cached × $0.5 + 100 out × $10, per million tokens.
    let cost = first["costUsd"].as_f64().unwrap();
    assert!((cost - 0.0024).abs() < 1e-12, "{cost}");
    assert!(
        usage[1].1.get("costUsd").is_none(),
        "no price, no cost: {}",
        usage[1].1
    );

    let Some((_, last)) = events.last() else {
        unreachable!()
    };
    let EventBody::RunFinished {
        usage: Some(totals),
        outcome: Some(Outcome::Success { .. }),
        ..
    } = &last.body
    else {
        panic!("{last:?}")
    };
    assert_eq!(totals[0].input_tokens, Some(2200));
    assert_eq!(totals[0].output_tokens, Some(105));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_model_reports_free_estimated_usage() {
    let (dir, url) = crate::helpers::fresh_database();
    let script = crate::helpers::write_script(dir.path(), json!([]));
    let mut config = crate::helpers::test_config(&url, &script, &["--engine", "demo"]);
    config.workspace_dir = dir.path().join("workspace");
    let app = crate::helpers::start(config).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "hello there").await;
    let events = socket.until_run_end().await;
    let usage = events
        .iter()
        .find_map(|(_, event)| match &event.body {
            EventBody::Custom { name, value } if name == "tandem.usage" => Some(value.clone()),
            _ => None,
        })
        .expect("a usage event");
    assert_eq!(usage["model"], "demo");
    assert_eq!(usage["costUsd"], 0.0);
    assert!(usage["inputTokens"].as_u64().unwrap() > 0, "{usage}");
    assert!(usage["outputTokens"].as_u64().unwrap() > 0, "{usage}");
}

#[test]
fn a_bad_price_table_stops_the_start_with_what_to_fix() {
    let bad = price_file(json!({"gpt-4o": {"input": "cheap", "output": 1}}));
    let config = tandem::Config::parse_from(["tandem", "--prices", &bad]);
    let error = config.validate().unwrap_err().to_string();
    assert!(error.contains("price table is not valid"), "{error}");
    assert!(error.contains("USD per million tokens"), "{error}");
    let missing = tandem::Config::parse_from(["tandem", "--prices", "/nonexistent/prices.json"]);
    let error = missing.validate().unwrap_err().to_string();
    assert!(error.contains("cannot read the price table"), "{error}");
}
