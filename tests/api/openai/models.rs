//! Per-session model choice: `GET /api/models` lists what a message may pick; the pick is
//! sent to the provider and holds for the session's later runs.

use super::app::app_with;
use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_runs_on_the_model_its_person_picked() {
    let replies = vec![
        Reply::sse("openai/text.sse"),
        Reply::sse("openai/text.sse"),
        Reply::sse("openai/text.sse"),
    ];
    let flags = [
        "--model",
        "gpt-4.1",
        "--models",
        "gpt-4.1-mini, gpt-4.1-nano",
    ];
    let (app, server) = app_with(replies, &flags).await;
    let (status, models) = app.get("/api/models").await;
    assert_eq!(status, 200);
    assert_eq!(
        models,
        json!({"engine": "openai", "default": "gpt-4.1",
               "models": ["gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"]})
    );

    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Hi").await;
    socket.until_run_end().await;
    let path = format!("/api/sessions/{session}/messages");
    let (status, body) = app
        .post(&path, json!({"text": "Again", "model": "gpt-4.1-mini"}))
        .await;
    assert_eq!(status, 202, "{body}");
    socket.until_run_end().await;
    app.say(&session, "And once more").await;
    socket.until_run_end().await;
    let sent: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(
        sent,
        ["gpt-4.1", "gpt-4.1-mini", "gpt-4.1-mini"],
        "the pick holds"
    );

    let (status, body) = app
        .post(&path, json!({"text": "x", "model": "gpt-9"}))
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("gpt-4.1-nano"));
    let log = app.log(&session).await;
    let picks = log
        .iter()
        .filter(|(_, e)| matches!(&e.body, EventBody::Custom { name, .. } if name == "tandem.model_selected"))
        .count();
    assert_eq!(picks, 1, "recorded once, with the run it started");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_model_gets_its_own_context_budget() {
    let replies = vec![Reply::sse("openai/text.sse"); 4];
    let flags = [
        "--model",
        "gpt-4.1",
        "--models",
        "gpt-4o",
        "--model-context-tokens",
        "gpt-4o=1",
        "--system-prompt",
        "",
    ];
    let (app, server) = app_with(replies, &flags).await;
    let (session, mut socket) = app.open_session().await;
    for text in ["One", "Two"] {
        app.say(&session, text).await;
        socket.until_run_end().await;
    }
    let path = format!("/api/sessions/{session}/messages");
    let (status, body) = app
        .post(&path, json!({"text": "Three", "model": "gpt-4o"}))
        .await;
    assert_eq!(status, 202, "{body}");
    socket.until_run_end().await;
    let sent: Vec<usize> = server
        .requests()
        .iter()
        .map(|r| r.body["messages"].as_array().unwrap().len())
        .collect();
    assert_eq!(
        sent,
        [1, 3, 1],
        "gpt-4.1's window holds everything; gpt-4o's budget of 1 only the latest turn"
    );
    let log = app.log(&session).await;
    let budgets: Vec<&Value> = log
        .iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::Custom { name, value } if name == "tandem.context_trimmed" => {
                Some(&value["budgetTokens"])
            }
            _ => None,
        })
        .collect();
    assert_eq!(budgets, [&json!(1)]);
}
