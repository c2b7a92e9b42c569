//! Replays (issue 57): a recorded run sent again, k times per variant, each trial a branch
//! that parts just before the run. Tool calls and questions the same as the record's get
//! the recorded results and answers without running; the first that differs is marked,
//! and what changes things never runs again; each trial is scored and each variant gets
//! pass@1 and pass^k.
//!
//! The stand-in models are the script engine's turns, with `byModel` turns for the
//! variants' models. A replay's trials end in their own runs, each a branch the test does
//! not know in advance, so [`until_done`] reads `GET /api/replays/{id}` until the replay
//! says it is done (no event announces a replay's end yet).

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use shared::{Event, EventBody};

use crate::helpers::{customs, spawn_app_with, spawn_app_with_users, TestApp};

/// Reads the replay until `done(replay)` holds; panics naming `what` after 60 s.
async fn until(app: &TestApp, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, replay) = app.get(&format!("/api/replays/{id}")).await;
        assert_eq!(status, 200, "{replay}");
        if done(&replay) {
            return replay;
        }
        assert!(
            Instant::now() < deadline,
            "waited 60 s for {what}: {replay:#}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Reads the replay until it is done (the OpenAI stand-in's test uses it too).
pub(crate) async fn until_done(app: &TestApp, id: &str) -> Value {
    until(app, id, "the replay to be done", |r| r["status"] == "done").await
}

/// A variant of a replay by label.
fn variant<'a>(replay: &'a Value, label: &str) -> &'a Value {
    replay["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["label"] == label)
        .unwrap_or_else(|| panic!("no variant {label}: {replay:#}"))
}

/// The tool results of a log after `seq`, as logged.
fn results_after(log: &[(u64, Event)], seq: u64) -> Vec<String> {
    log.iter()
        .filter(|(s, _)| *s > seq)
        .filter_map(|(_, e)| match &e.body {
            EventBody::ToolCallResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_results_are_served_divergence_stops_side_effects_and_pass_hat_k_is_computed() {
    // The run appends to a file and computes; the default model answers 42 again, a
    // third model answers 41, another model appends somewhere else.
    let append = json!({"name": "append_file", "arguments": {"path": "log.txt", "line": "entry"}});
    let compute = json!({"name": "calculator", "arguments": {"expression": "6*7"}});
    let elsewhere =
        json!({"name": "append_file", "arguments": {"path": "elsewhere.txt", "line": "x"}});
    let turns = json!([
        {"toolCalls": [append, compute],
         "byModel": {"other-model": {"toolCalls": [elsewhere]}}},
        {"text": "Appended; the answer is 42.",
         "byModel": {"third-model": {"text": "I think it is 41."}}},
    ]);
    let workspace = tempfile::tempdir().unwrap();
    let flags = [
        "--skip-approval",
        "append_file",
        "--models",
        "other-model,third-model",
        "--workspace-dir",
        workspace.path().to_str().unwrap(),
    ];
    let app = spawn_app_with(turns, &flags).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "log it and compute").await;
    socket.until_run_end().await;
    let recorded = app.log(&session).await;
    let workspace = workspace.path().join("local");
    assert_eq!(
        std::fs::read_to_string(workspace.join("log.txt")).unwrap(),
        "entry\n"
    );

    let body = json!({
        "variants": [{"label": "same"}, {"label": "worse", "model": "third-model"},
                     {"label": "other", "model": "other-model", "temperature": 0.2}],
        "k": 3,
        "expect": {"contains": ["42"]},
    });
    let (status, started) = app
        .post(&format!("/api/sessions/{session}/replays"), body)
        .await;
    assert_eq!(status, 202, "{started}");
    assert_eq!(started["sessionId"], session.as_str());
    let id = started["id"].as_str().unwrap();
    let replay = until_done(&app, id).await;
    assert_eq!(replay["recordedText"], "Appended; the answer is 42.");

    // Nothing with a side effect ran again: 9 trials, the file as the run left it.
    assert_eq!(
        std::fs::read_to_string(workspace.join("log.txt")).unwrap(),
        "entry\n"
    );
    assert!(!workspace.join("elsewhere.txt").exists());

    let same = variant(&replay, "same");
    assert_eq!(
        (same["passes"].as_u64(), same["passHatK"].as_f64()),
        (Some(3), Some(1.0)),
        "{replay:#}"
    );
    assert_eq!(same["passAt1"], 1.0);
    let recorded_results = results_after(&recorded, 0);
    for trial in same["trials"].as_array().unwrap() {
        assert_eq!(trial["status"], "finished", "{trial}");
        assert_eq!(trial["passed"], true);
        assert!(trial.get("divergedAtSeq").is_none(), "{trial}");
        assert_eq!(trial["finalText"], "Appended; the answer is 42.");
        let branch = app.log(trial["sessionId"].as_str().unwrap()).await;
        // The branch shares nothing before the run (it was the first): its results are
        // the recorded ones, word for word.
        assert_eq!(results_after(&branch, 0), recorded_results);
        let mark = &customs(&branch, "tandem.replay")[0];
        assert_eq!(
            (mark["replayId"].as_str(), mark["variant"].as_str()),
            (Some(id), Some("same"))
        );
    }

    let worse = variant(&replay, "worse");
    assert_eq!(worse["model"], "third-model");
    assert_eq!(
        (worse["passes"].as_u64(), worse["passHatK"].as_f64()),
        (Some(0), Some(0.0))
    );
    assert_eq!(worse["passAt1"], 0.0);
    let trial = &worse["trials"][0];
    assert_eq!(trial["finalText"], "I think it is 41.");
    assert!(
        trial["reason"]
            .as_str()
            .unwrap()
            .contains("does not contain “42”"),
        "{trial}"
    );

    // The other model's call differs and changes things: the trial stops there, marked.
    let other = variant(&replay, "other");
    assert_eq!(other["passHatK"], 0.0);
    for trial in other["trials"].as_array().unwrap() {
        assert_eq!(
            (trial["status"].as_str(), trial["passed"].as_bool()),
            (Some("stopped"), Some(false))
        );
        let branch = app.log(trial["sessionId"].as_str().unwrap()).await;
        let at = trial["divergedAtSeq"]
            .as_u64()
            .expect("marked where it diverged");
        let (_, start) = branch.iter().find(|(seq, _)| *seq == at).unwrap();
        assert!(
            matches!(&start.body, EventBody::ToolCallStart { tool_call_name, .. } if tool_call_name == "append_file"),
            "{start:?}"
        );
        let diverged = &customs(&branch, "tandem.replay_diverged")[0];
        assert_eq!(diverged["recordedName"], "append_file");
        assert!(
            trial["reason"].as_str().unwrap().contains("changes things"),
            "{trial}"
        );
    }

    // The conversation lists its replay; the trials are branches of it.
    let (_, listed) = app.get(&format!("/api/sessions/{session}/replays")).await;
    assert_eq!(listed["replays"][0]["id"], id);
    let (_, branches) = app.get(&format!("/api/sessions/{session}/branches")).await;
    assert_eq!(branches["branches"].as_array().unwrap().len(), 1 + 9);
    // The list still shows the conversation by the person's own line, not a trial's.
    let (_, listed) = app.get("/api/sessions").await;
    let rows = listed["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{listed}");
    assert_eq!(rows[0]["id"], session.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_answers_are_reused_another_question_waits_or_stops_and_the_judge_is_recorded() {
    let ask = |prompt: &str| json!({"name": "request_input", "arguments": {"kind": "text", "prompt": prompt}});
    let verdict = json!({"text": "{\"pass\": true, \"reason\": \"it names Paris\"}",
                         "usage": {"model": "judge-model", "inputTokens": 50, "outputTokens": 9}});
    let turns = json!([
        {"toolCalls": [ask("Which city?")],
         "byModel": {"curious-model": {"toolCalls": [ask("Which country?")]}}},
        {"text": "Paris it is.", "usage": {"inputTokens": 100, "outputTokens": 4}},
        {"text": "unused", "byModel": {"judge-model": verdict}},
    ]);
    let flags = ["--models", "curious-model,judge-model"];
    let app = spawn_app_with(turns, &flags).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "plan a trip").await;
    let paused = socket.until_run_end().await;
    let interrupt = crate::helpers::socket::interrupt_id(&paused);
    let answer = json!({"status": "resolved", "payload": {"text": "Paris"}});
    let path = format!("/api/sessions/{session}/interrupts/{interrupt}");
    let (status, body) = app.post(&path, answer).await;
    assert_eq!(status, 202, "{body}");
    socket.until_run_end().await;

    // The same question gets the recorded answer, with no pause; the judge grades.
    let body = json!({
        "variants": [{"label": "a"}, {"label": "curious", "model": "curious-model"}],
        "k": 2,
        "expect": {"judge": {"model": "judge-model", "rubric": "It names the city."}},
    });
    let (status, started) = app
        .post(&format!("/api/sessions/{session}/replays"), body)
        .await;
    assert_eq!(status, 202, "{started}");
    let replay = until_done(&app, started["id"].as_str().unwrap()).await;
    let a = variant(&replay, "a");
    assert_eq!(a["passHatK"], 1.0, "{a:#}");
    for trial in a["trials"].as_array().unwrap() {
        assert_eq!(trial["verdict"]["passed"], true);
        assert_eq!(trial["verdict"]["reason"], "it names Paris");
        assert_eq!(trial["verdict"]["model"], "judge-model");
        // The run's own call and the judge's count.
        assert_eq!(trial["usage"]["inputTokens"], 150, "{trial}");
        let branch = app.log(trial["sessionId"].as_str().unwrap()).await;
        let answered = results_after(&branch, 0);
        assert_eq!(answered.len(), 1);
        let answered: Value = serde_json::from_str(&answered[0]).unwrap();
        assert_eq!(answered["payload"]["text"], "Paris");
        let paused = branch.iter().any(|(_, e)| {
            matches!(
                &e.body,
                EventBody::RunFinished {
                    outcome: Some(shared::Outcome::Interrupt { .. }),
                    ..
                }
            )
        });
        assert!(!paused, "a recorded answer does not pause the trial");
        assert_eq!(customs(&branch, "tandem.replay_verdict").len(), 1);
    }
    // Another question with recorded answers only: the trial stops.
    let curious = variant(&replay, "curious");
    assert_eq!(curious["trials"][0]["status"], "stopped");
    assert!(curious["trials"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("question"));

    // With `answers: ask` the other question waits for the person; answered, the trial
    // goes on and the replay ends.
    let body = json!({"variants": [{"label": "curious", "model": "curious-model"}], "k": 1,
                      "answers": "ask"});
    let (_, started) = app
        .post(&format!("/api/sessions/{session}/replays"), body)
        .await;
    let id = started["id"].as_str().unwrap();
    let waiting = until(&app, id, "the trial to wait", |r| {
        r["variants"][0]["trials"][0]["status"] == "waiting"
    })
    .await;
    assert_eq!(waiting["status"], "running");
    let trial = waiting["variants"][0]["trials"][0]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, detail) = app.get(&format!("/api/sessions/{trial}")).await;
    let interrupt = detail["pendingInterrupts"][0]["id"].as_str().unwrap();
    let path = format!("/api/sessions/{trial}/interrupts/{interrupt}");
    let (status, _) = app
        .post(
            &path,
            json!({"status": "resolved", "payload": {"text": "France"}}),
        )
        .await;
    assert_eq!(status, 202);
    let replay = until_done(&app, id).await;
    let trial = &replay["variants"][0]["trials"][0];
    assert_eq!(
        (trial["status"].as_str(), trial["passed"].as_bool()),
        (Some("finished"), Some(true))
    );
    assert_eq!(trial["finalText"], "Paris it is.");
    assert!(trial["divergedAtSeq"].is_u64(), "{trial}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_is_its_owners_alone_bad_requests_name_the_field_and_a_cancel_stops_it() {
    let turns = json!([{"text": "First answer, slowly told."}]);
    let mut apps = spawn_app_with_users(
        turns,
        &["--token-delay-ms", "100", "--replay-concurrency", "1"],
        &["ada", "bob"],
    )
    .await;
    let (ada, bob) = (apps.remove(0), apps.remove(0));
    let (session, mut socket) = ada.open_session().await;
    ada.say(&session, "hello").await;
    socket.until_run_end().await;
    let path = format!("/api/sessions/{session}/replays");

    for (body, field) in [
        (json!({"variants": [{"label": "a"}], "k": 0}), "k"),
        (json!({"variants": [], "k": 1}), "variants"),
        (
            json!({"variants": [{"label": "a", "model": "nope"}], "k": 1}),
            "variants.model",
        ),
        (
            json!({"variants": [{"label": "a"}], "k": 1, "expect": {"regex": "("}}),
            "expect.regex",
        ),
        (
            json!({"variants": [{"label": "a"}], "k": 1, "maxCostUsd": 0}),
            "maxCostUsd",
        ),
    ] {
        let (status, error) = ada.post(&path, body).await;
        assert_eq!(status, 422, "{error}");
        assert_eq!(error["error"]["code"], "invalid_replay");
        assert_eq!(error["error"]["details"]["field"], field, "{error}");
    }
    let (status, _) = ada
        .post(
            &path,
            json!({"variants": [{"label": "a"}], "k": 1, "runId": "run_nope"}),
        )
        .await;
    assert_eq!(status, 404);
    let (_, none) = ada.get(&path).await;
    assert_eq!(none["replays"], json!([]), "nothing was kept");

    // Bob can neither replay Ada's conversation nor read or cancel her replay.
    let body = json!({"variants": [{"label": "a"}], "k": 3});
    let (status, _) = bob.post(&path, body.clone()).await;
    assert_eq!(status, 404);
    let (status, started) = ada.post(&path, body).await;
    assert_eq!(status, 202);
    let id = started["id"].as_str().unwrap();
    let replay_path = format!("/api/replays/{id}");
    assert_eq!(bob.get(&replay_path).await.0, 404);
    let (status, _) = bob.delete(&replay_path).await;
    assert_eq!(status, 404);

    // One trial at a time: cancelling while the first streams stops it and skips the rest.
    until(&ada, id, "the first trial to run", |r| {
        r["variants"][0]["trials"][0]["status"] == "running"
    })
    .await;
    let (status, cancelled) = ada.delete(&replay_path).await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled");
    let trials = cancelled["variants"][0]["trials"].as_array().unwrap();
    let statuses: Vec<&str> = trials
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["cancelled", "skipped", "skipped"]);
    let first = trials[0]["sessionId"].as_str().unwrap();
    let mut branch = ada.socket(first, 0).await;
    branch.until_run_end().await;
    let (_, detail) = ada.get(&format!("/api/sessions/{first}")).await;
    assert_eq!(detail["status"], "idle");
    let (_, again) = ada.get(&replay_path).await;
    assert_eq!(again["status"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trials_spend_their_owners_budget_and_stop_starting_at_the_replays_cap() {
    // Each call costs $0.10 (1,000 input tokens at $100 a million).
    let turns = json!([{"text": "Priced.", "usage": {"model": "gpt-test-1", "inputTokens": 1000}}]);
    let prices = crate::usage::price_file(json!({"gpt-test*": {"input": 100, "output": 0}}));
    let one_at_a_time = ["--prices", &prices, "--replay-concurrency", "1"];

    // The owner's budget of $0.25 a day: the run and two trials fit, the third is refused.
    let flags = [&one_at_a_time[..], &["--budget-daily-usd", "0.25"]].concat();
    let app = spawn_app_with(turns.clone(), &flags).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "price it").await;
    socket.until_run_end().await;
    let body = json!({"variants": [{"label": "a"}], "k": 3});
    let (_, started) = app
        .post(&format!("/api/sessions/{session}/replays"), body)
        .await;
    let replay = until_done(&app, started["id"].as_str().unwrap()).await;
    let trials = replay["variants"][0]["trials"].as_array().unwrap();
    let statuses: Vec<&str> = trials
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["finished", "finished", "stopped"], "{replay:#}");
    assert!(trials[2]["reason"]
        .as_str()
        .unwrap()
        .contains("budget_exceeded"));
    assert_eq!(trials[0]["costUsd"], 0.1);
    assert_eq!(replay["variants"][0]["passHatK"], 0.0);

    // The replay's own cap: no trial starts once the ended ones cost $0.15.
    let app = spawn_app_with(turns, &one_at_a_time).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "price it").await;
    socket.until_run_end().await;
    let body = json!({"variants": [{"label": "a"}], "k": 3, "maxCostUsd": 0.15});
    let (_, started) = app
        .post(&format!("/api/sessions/{session}/replays"), body)
        .await;
    let replay = until_done(&app, started["id"].as_str().unwrap()).await;
    let trials = replay["variants"][0]["trials"].as_array().unwrap();
    let statuses: Vec<&str> = trials
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["finished", "finished", "skipped"], "{replay:#}");
    assert!(trials[2]["reason"].as_str().unwrap().contains("maxCostUsd"));
    assert!(
        trials[2].get("sessionId").is_none(),
        "a skipped trial made no branch"
    );
    let (_, branches) = app.get(&format!("/api/sessions/{session}/branches")).await;
    assert_eq!(branches["branches"].as_array().unwrap().len(), 3);
}
