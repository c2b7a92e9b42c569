//! Budgets (issue 29, part 4): a run checks its user's spending against their caps before
//! each model call. Past a cap it fails with `budget_exceeded`, or pauses with an
//! interrupt of reason `budget` that the person answers (stop, or continue where
//! `--budget-overrun` allows); `GET /api/auth/me` says what is left, and however many
//! runs race one user's budget, on however many instances, they overspend it by at most
//! one model call.

use serde_json::{json, Value};
use shared::{Event, EventBody, Outcome};

use crate::helpers::socket::interrupt_id;
use crate::helpers::{
    customs, fresh_database, fresh_postgres, start, test_config, write_script, TestApp,
};

/// A model turn that calls the calculator and reports `tokens` input tokens.
fn calculating(tokens: u64) -> Value {
    json!({"toolCalls": [{"name": "calculator", "arguments": {"expression": "1+1"}}],
           "usage": {"model": "gpt-test-1", "inputTokens": tokens, "outputTokens": 0}})
}

/// `calls` calculating turns of 1,000 tokens, then an answer.
fn turns(calls: usize) -> Value {
    let mut turns: Vec<Value> = (0..calls).map(|_| calculating(1000)).collect();
    turns.push(json!({"text": "Done.", "usage": {"model": "gpt-test-1", "inputTokens": 1000}}));
    json!(turns)
}

/// The tokens a log's usage events count.
fn tokens_logged(log: &[(u64, Event)]) -> u64 {
    usage(log)
        .iter()
        .map(|value| {
            value["inputTokens"].as_u64().unwrap() + value["outputTokens"].as_u64().unwrap_or(0)
        })
        .sum()
}

fn usage(log: &[(u64, Event)]) -> Vec<Value> {
    customs(log, "tandem.usage")
}

/// The app on a database whose URL the test keeps (to set budgets as the shell would).
async fn app_with(turns: Value, flags: &[&str]) -> (TestApp, String, crate::helpers::TestDir) {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), turns);
    let app = start(test_config(&url, &script, flags)).await;
    (app, url, dir)
}

/// Runs `tandem users budget local --daily-tokens N` against the database.
async fn set_daily_tokens(url: &str, tokens: &str) {
    let command = tandem::auth::cli::UsersCommand::Budget {
        name: "local".into(),
        daily_usd: None,
        monthly_usd: None,
        daily_tokens: Some(tokens.into()),
        monthly_tokens: None,
    };
    let set = tandem::auth::cli::UsersOn(command, Default::default());
    tandem::store::open(url, &Default::default(), set)
        .await
        .unwrap()
        .unwrap();
}

fn last(log: &[(u64, Event)]) -> &EventBody {
    &log.last().unwrap().1.body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_spends_its_daily_dollars_mid_run_fails_with_budget_exceeded() {
    let prices = crate::usage::price_file(json!({"gpt-test*": {"input": 100, "output": 100}}));
    // Each call costs $0.10: the fourth would start past $0.25.
    let flags = ["--prices", &prices, "--budget-daily-usd", "0.25"];
    let (app, _url, _dir) = app_with(turns(6), &flags).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "count").await;
    socket.until_run_end().await;
    let log = app.log(&session).await;
    assert_eq!(
        usage(&log).len(),
        3,
        "three calls, then the check stopped the run"
    );
    let EventBody::RunError { message, code } = last(&log) else {
        panic!("{:?}", last(&log))
    };
    assert_eq!(code.as_deref(), Some("budget_exceeded"));
    assert_eq!(
        message,
        "Your budget is used up: $0.30 of $0.25 spent today."
    );

    let (status, me) = app.get("/api/auth/me").await;
    assert_eq!(status, 200, "{me}");
    let line = &me["budget"][0];
    assert_eq!(
        (&line["period"], &line["unit"]),
        (&json!("day"), &json!("usd")),
        "{me}"
    );
    assert_eq!(
        (line["limit"].as_f64(), line["left"].as_f64()),
        (Some(0.25), Some(0.0))
    );
    assert!((line["spent"].as_f64().unwrap() - 0.3).abs() < 1e-9, "{me}");
    assert!(
        line["resetsAt"].as_str().unwrap().ends_with("T00:00:00Z"),
        "{me}"
    );

    // Every further message stops before its model call, and says why.
    app.say(&session, "again").await;
    socket.until_run_end().await;
    let log = app.log(&session).await;
    assert_eq!(usage(&log).len(), 3, "no call past the budget");
    assert!(
        matches!(last(&log), EventBody::RunError { code: Some(code), .. } if code == "budget_exceeded")
    );
    let metrics = app.metrics().await;
    assert!(
        metrics.contains("tandem_budget_stops_total{outcome=\"failed\"} 2"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_run_continues_only_once_its_budget_has_room() {
    let flags = ["--budget-daily-tokens", "2500", "--budget-overrun", "pause"];
    let (app, url, _dir) = app_with(turns(5), &flags).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "count").await;
    let events = socket.until_run_end().await;
    let EventBody::RunFinished {
        outcome: Some(Outcome::Interrupt { interrupts }),
        ..
    } = last(&events)
    else {
        panic!("{:?}", last(&events))
    };
    let interrupt = &interrupts[0];
    assert_eq!(interrupt.reason, "budget");
    assert_eq!(
        interrupt.message.as_deref(),
        Some("Your budget is used up: 3,000 of 2,500 tokens spent today. Stop here, or continue once the budget has room again.")
    );
    let metadata = interrupt.metadata.as_ref().unwrap();
    assert_eq!(metadata["mayOverrun"], false);
    assert_eq!(metadata["budget"][0]["spent"], 3000.0);
    let (_, session_row) = app.get(&format!("/api/sessions/{session}")).await;
    assert_eq!(session_row["status"], "awaiting_input", "{session_row}");

    let path = format!("/api/sessions/{session}/interrupts/{}", interrupt.id);
    let go_on = json!({"status": "resolved", "payload": {"continue": true}});
    let before = app.log(&session).await;
    let (status, body) = app.post(&path, go_on.clone()).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (409, &json!("budget_exceeded")),
        "{body}"
    );
    assert_eq!(
        body["error"]["details"]["budget"][0]["unit"], "tokens",
        "{body}"
    );
    assert_eq!(
        app.log(&session).await,
        before,
        "a refused answer changes nothing"
    );

    // Raised from the shell: the same answer now resumes the run, to its end.
    set_daily_tokens(&url, "10000").await;
    let (status, body) = app.post(&path, go_on).await;
    assert_eq!(status, 202, "{body}");
    socket.until_run_end().await;
    let log = app.log(&session).await;
    assert_eq!(usage(&log).len(), 6, "every turn ran");
    assert!(matches!(
        last(&log),
        EventBody::RunFinished {
            outcome: Some(Outcome::Success { .. }),
            ..
        }
    ));
    assert_eq!(
        customs(&log, "tandem.budget_decision"),
        [json!({"interruptId": interrupt.id, "continue": true, "pastBudget": false})]
    );
    let (_, me) = app.get("/api/auth/me").await;
    assert_eq!(me["budget"][0]["left"], 4000.0, "{me}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_may_let_a_run_go_past_its_budget_or_stop_it_where_overrun_is_allowed() {
    let flags = ["--budget-daily-tokens", "2500", "--budget-overrun", "allow"];
    let (app, _url, _dir) = app_with(turns(4), &flags).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "count").await;
    let id = interrupt_id(&socket.until_run_end().await);
    let path = format!("/api/sessions/{session}/interrupts/{id}");
    let (status, body) = app
        .post(
            &path,
            json!({"status": "resolved", "payload": {"continue": true}}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    socket.until_run_end().await;
    let log = app.log(&session).await;
    assert_eq!(
        tokens_logged(&log),
        5000,
        "the run went on past the cap, to its end"
    );
    assert!(matches!(
        last(&log),
        EventBody::RunFinished {
            outcome: Some(Outcome::Success { .. }),
            ..
        }
    ));

    // The next run stops before its first call; stopping it there ends it, nothing runs.
    let (other, mut other_socket) = app.open_session().await;
    app.say(&other, "more").await;
    let events = other_socket.until_run_end().await;
    let id = interrupt_id(&events);
    assert!(usage(&events).is_empty());
    let path = format!("/api/sessions/{other}/interrupts/{id}");
    let (status, body) = app
        .post(
            &path,
            json!({"status": "resolved", "payload": {"continue": false}}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let events = other_socket.until_run_end().await;
    assert!(matches!(
        last(&events),
        EventBody::RunFinished {
            outcome: Some(Outcome::Cancelled),
            ..
        }
    ));
    assert_eq!(
        customs(&events, "tandem.budget_decision"),
        [json!({"interruptId": id, "continue": false, "pastBudget": false})]
    );
    let (_, row) = app.get(&format!("/api/sessions/{other}")).await;
    assert_eq!(row["status"], "idle", "{row}");
    assert!(
        usage(&app.log(&other).await).is_empty(),
        "no model call was made"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_racing_one_user_s_budget_overspend_it_by_at_most_one_call() {
    const CAP: u64 = 5500;
    const CALL: u64 = 1000;
    let (dir, url) = fresh_postgres();
    let script = write_script(dir.path(), turns(20));
    let flags = ["--budget-daily-tokens", "5500", "--max-model-calls", "50"];
    let a = start(test_config(&url, &script, &flags)).await;
    let b = start(test_config(&url, &script, &flags)).await;
    let (on_a, mut socket_a) = a.open_session().await;
    let (on_b, mut socket_b) = b.open_session().await;
    // Both runs start together and call the model in turn until the shared cap stops them.
    tokio::join!(a.say(&on_a, "count on A"), b.say(&on_b, "count on B"));
    tokio::join!(socket_a.until_run_end(), socket_b.until_run_end());
    let (log_a, log_b) = (a.log(&on_a).await, b.log(&on_b).await);
    for log in [&log_a, &log_b] {
        assert!(
            matches!(last(log), EventBody::RunError { code: Some(code), .. } if code == "budget_exceeded"),
            "{:?}",
            last(log)
        );
    }
    let spent = tokens_logged(&log_a) + tokens_logged(&log_b);
    assert!(spent >= CAP, "the cap was reached: {spent}");
    // A user under a cap has one model call in flight at a time, on every instance, and
    // each checks the spending of every call before it: only the last goes past the cap.
    assert!(
        spent < CAP + CALL,
        "overspent by more than one call: {spent}"
    );
    let (_, me) = b.get("/api/auth/me").await;
    assert_eq!(
        me["budget"][0]["spent"].as_f64(),
        Some(spent as f64),
        "{me}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_runs_of_one_user_overspend_the_budget_by_one_call_at_most() {
    const CAP: u64 = 300;
    const CALL: u64 = 150;
    const RUNS: usize = 5;
    // Each call streams ten words 20 ms apart, so the runs' calls overlap unless taken in
    // turn.
    let slow = |_| {
        json!({"text": "one two three four five six seven eight nine ten",
               "toolCalls": [{"name": "calculator", "arguments": {"expression": "1+1"}}],
               "usage": {"model": "gpt-test-1", "inputTokens": CALL, "outputTokens": 0}})
    };
    let turns: Vec<Value> = (0..10).map(slow).collect();
    let flags = ["--budget-daily-tokens", "300", "--token-delay-ms", "20"];
    let (app, _url, _dir) = app_with(json!(turns), &flags).await;
    let mut sessions = Vec::new();
    for _ in 0..RUNS {
        sessions.push(app.open_session().await);
    }
    let starts = sessions.iter().map(|(id, _)| app.say(id, "count"));
    futures_util::future::join_all(starts).await;
    let mut spent = 0;
    for (id, socket) in &mut sessions {
        socket.until_run_end().await;
        let log = app.log(id).await;
        assert!(
            matches!(last(&log), EventBody::RunError { code: Some(code), .. } if code == "budget_exceeded"),
            "{:?}",
            last(&log)
        );
        spent += tokens_logged(&log);
    }
    assert!(spent >= CAP, "the cap was reached: {spent}");
    assert!(
        spent < CAP + CALL,
        "{RUNS} runs at once overspent the cap of {CAP} by more than one call: {spent}"
    );
}
