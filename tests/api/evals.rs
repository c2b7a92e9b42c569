//! Evals (issue 57): one replay per conversation an eval names or its filter matches,
//! shown as one table per variant and per conversation, and `tandem eval`, which prints
//! that table and says whether every variant reached the bar.
//!
//! As in `replays.rs`, an eval's end is read from `GET /api/evals/{id}` until it says so.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem::config::EvalCommand;

use crate::helpers::{customs, spawn_app_with, TestApp};

/// Reads the eval until it is no longer running; panics after 60 s.
async fn until_done(app: &TestApp, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, eval) = app.get(&format!("/api/evals/{id}")).await;
        assert_eq!(status, 200, "{eval}");
        if eval["status"] != "running" {
            return eval;
        }
        assert!(
            Instant::now() < deadline,
            "waited 60 s for the eval: {eval:#}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A conversation titled by `text` whose one run answered; its id.
async fn conversation(app: &TestApp, text: &str) -> String {
    let (session, mut socket) = app.open_session().await;
    app.say(&session, text).await;
    socket.until_run_end().await;
    session
}

/// `tandem eval` against `app` for `sessions` with these variants.
fn command(
    app: &TestApp,
    sessions: &[&str],
    variants: &[&str],
    out: &std::path::Path,
) -> EvalCommand {
    EvalCommand {
        server: format!("http://{}", app.address),
        token_file: None,
        sessions: sessions.iter().map(|s| s.to_string()).collect(),
        feedback: None,
        title_contains: None,
        since: None,
        variants: variants.iter().map(|v| v.to_string()).collect(),
        k: 2,
        contains: vec!["42".into()],
        min_pass_hat_k: 0.9,
        out: Some(out.to_path_buf()),
        timeout_seconds: 60,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eval_replays_each_conversation_and_gates_on_pass_hat_k() {
    // Every conversation's run answers 42; a third model does not. The second turn is
    // what the judge (the default model, named by the script's length) says when asked;
    // a run that makes a second call (recovered under load) answers 42 again.
    let verdict = json!({"text": "{\"pass\": true, \"reason\": \"the same answer\"}"});
    let turns = json!([
        {"text": "The answer is 42.", "byModel": {"third-model": {"text": "No idea."}}},
        {"text": "The answer is 42.", "byModel": {"script (2 turns)": verdict}},
    ]);
    let app = spawn_app_with(turns, &["--models", "third-model"]).await;
    let first = conversation(&app, "What is six times seven?").await;
    let second = conversation(&app, "Six sevens?").await;

    let body = json!({"sessions": [first, second], "k": 2, "expect": {"contains": ["42"]},
                      "variants": [{"label": "same"}, {"label": "worse", "model": "third-model"}]});
    let (status, started) = app.post("/api/evals", body).await;
    assert_eq!(status, 202, "{started}");
    let eval = until_done(&app, started["id"].as_str().unwrap()).await;
    assert_eq!(eval["status"], "done");
    let same = &eval["variants"][0];
    assert_eq!(
        (same["label"].as_str(), same["passHatK"].as_f64()),
        (Some("same"), Some(1.0))
    );
    assert_eq!(
        (same["conversations"].as_u64(), same["passAt1"].as_f64()),
        (Some(2), Some(1.0))
    );
    assert!(same["latencyMsP50"].is_u64(), "{same}");
    let worse = &eval["variants"][1];
    assert_eq!(
        (worse["passHatK"].as_f64(), worse["passAt1"].as_f64()),
        (Some(0.0), Some(0.0))
    );
    let conversations = eval["conversations"].as_array().unwrap();
    assert_eq!(conversations.len(), 2);
    for row in conversations {
        assert!(row["replayId"].is_string(), "{row}");
        assert_eq!(row["variants"][0]["passHatK"], 1.0);
        assert_eq!(row["variants"][1]["passHatK"], 0.0);
    }
    let (_, listed) = app.get("/api/evals").await;
    assert_eq!(listed["evals"][0]["id"], eval["id"]);

    // `tandem eval`: below the bar it fails, naming the variant; above it passes.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval.json");
    let both = command(
        &app,
        &[&first, &second],
        &["same=", "worse=third-model"],
        &out,
    );
    let outcome = tandem::replays::evals_cli::run(&both).await.unwrap();
    assert!(!outcome.passed, "{}", outcome.table);
    let worse_line = outcome
        .table
        .lines()
        .find(|l| l.starts_with("worse"))
        .unwrap();
    assert!(worse_line.ends_with("FAIL"), "{}", outcome.table);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written["variants"][1]["passHatK"], 0.0);
    let only_same = command(&app, &[&first, &second], &["same="], &out);
    let outcome = tandem::replays::evals_cli::run(&only_same).await.unwrap();
    let shown = serde_json::to_string_pretty(&outcome.eval).unwrap();
    assert!(outcome.passed, "{}\n{shown}", outcome.table);

    // A filter picks conversations by rating and title; without `expect` a judge compares
    // each answer with the recorded one.
    let log = app.log(&first).await;
    let run = crate::helpers::socket::run_id(&log, 0);
    let (status, _) = app
        .post(
            &format!("/api/sessions/{first}/runs/{run}/feedback"),
            json!({"rating": "down"}),
        )
        .await;
    assert_eq!(status, 200);
    let body = json!({"filter": {"feedback": "down", "titleContains": "SIX TIMES"},
                      "variants": [{"label": "same"}], "k": 1});
    let (status, started) = app.post("/api/evals", body).await;
    assert_eq!(status, 202, "{started}");
    let eval = until_done(&app, started["id"].as_str().unwrap()).await;
    let conversations = eval["conversations"].as_array().unwrap();
    assert_eq!(conversations.len(), 1, "{eval:#}");
    assert_eq!(conversations[0]["sessionId"], first.as_str());
    assert_eq!(eval["variants"][0]["passHatK"], 1.0, "{eval:#}");
    let replay = conversations[0]["replayId"].as_str().unwrap();
    let (_, replay) = app.get(&format!("/api/replays/{replay}")).await;
    let trial = &replay["variants"][0]["trials"][0];
    assert_eq!(trial["verdict"]["reason"], "the same answer", "{trial}");
    let branch = app.log(trial["sessionId"].as_str().unwrap()).await;
    assert_eq!(customs(&branch, "tandem.replay_verdict").len(), 1);

    // Exactly one of `sessions` and `filter`; nothing kept when refused.
    for (body, field) in [
        (json!({"variants": [{"label": "a"}], "k": 1}), "sessions"),
        (
            json!({"sessions": [first], "filter": {}, "variants": [{"label": "a"}], "k": 1}),
            "sessions",
        ),
        (
            json!({"sessions": ["nope"], "variants": [{"label": "a"}], "k": 1}),
            "sessions",
        ),
        (
            json!({"filter": {"titleContains": "zebra"}, "variants": [{"label": "a"}], "k": 1}),
            "filter",
        ),
        (
            json!({"filter": {"since": "yesterday"}, "variants": [{"label": "a"}], "k": 1}),
            "filter.since",
        ),
    ] {
        let (status, error) = app.post("/api/evals", body).await;
        assert_eq!(status, 422, "{error}");
        assert_eq!(error["error"]["details"]["field"], field, "{error}");
    }
    let (_, listed) = app.get("/api/evals").await;
    assert_eq!(
        listed["evals"].as_array().unwrap().len(),
        4,
        "three made above and one here"
    );
}
