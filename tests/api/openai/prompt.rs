//! The system prompt as the provider receives it: the operator's file, then what an
//! AG-UI client passed as `context`.

use super::app::app_with;
use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configured_prompt_and_the_clients_context_lead_every_request() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("prompt.md");
    std::fs::write(&file, "You plan trips. Ask before booking anything.").unwrap();
    let flags = ["--system-prompt-file", file.to_str().unwrap()];
    let (app, server) = app_with(vec![Reply::sse("openai/text.sse")], &flags).await;
    let thread = uuid::Uuid::new_v4().to_string();
    let input = json!({
        "threadId": thread, "runId": "r1", "state": {}, "tools": [], "forwardedProps": {},
        "context": [{"description": "The person's city", "value": "Lisbon"}],
        "messages": [{"id": "u1", "role": "user", "content": "Plan a weekend"}],
    });
    let response = app
        .http
        .post(app.url("/api/agui"))
        .json(&input)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let streamed = response.text().await.unwrap();
    assert!(streamed.contains("RUN_FINISHED"), "{streamed}");
    let sent = &server.requests()[0].body["messages"];
    assert_eq!(
        sent[0],
        json!({"role": "system", "content": "You plan trips. Ask before booking anything.\n\n\
            Context from the application the person is using:\n- The person's city: Lisbon"})
    );
    assert_eq!(
        sent[1],
        json!({"role": "user", "content": "Plan a weekend"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replays_variant_sends_its_own_system_prompt_and_temperature() {
    let replies = vec![Reply::sse("openai/text.sse"), Reply::sse("openai/text.sse")];
    let (app, server) = app_with(replies, &["--system-prompt", "The operator's prompt."]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Plan a weekend").await;
    socket.until_run_end().await;
    let body = json!({"k": 1, "variants": [
        {"label": "terse", "systemPrompt": "Answer in one line.", "temperature": 0.3}]});
    let (status, started) = app
        .post(&format!("/api/sessions/{session}/replays"), body)
        .await;
    assert_eq!(status, 202, "{started}");
    crate::replays::until_done(&app, started["id"].as_str().unwrap()).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the run and its one trial");
    let (recorded, trial) = (&requests[0].body, &requests[1].body);
    assert_eq!(recorded["messages"][0]["content"], "The operator's prompt.");
    assert!(recorded.get("temperature").is_none(), "{recorded}");
    assert_eq!(
        trial["messages"][0],
        json!({"role": "system", "content": "Answer in one line."})
    );
    assert_eq!(
        trial["messages"][1],
        json!({"role": "user", "content": "Plan a weekend"})
    );
    assert_eq!(trial["temperature"], json!(0.3));
}
