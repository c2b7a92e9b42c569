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
