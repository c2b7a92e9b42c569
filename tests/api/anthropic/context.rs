//! The system prompt and the context window against the Anthropic stand-in: the prompt
//! arrives in `system`; a session grown past its budget sends its newest whole turns
//! (a `tool_use` with its `tool_result`), and with `--context-strategy summarise` the
//! summary of the rest as a second `system` block.

use serde_json::{json, Value};

use super::{assert_well_formed, KEY};
use crate::helpers::provider::{ProviderServer, Reply};
use crate::helpers::{customs, key_file, spawn_app_with, TestApp};

async fn app_for(server: &ProviderServer, extra: &[&str]) -> TestApp {
    let key = key_file(KEY);
    let mut flags = vec![
        "--engine",
        "anthropic",
        "--anthropic-base-url",
        &server.url,
        "--anthropic-api-key-file",
        &key,
    ];
    flags.extend_from_slice(extra);
    spawn_app_with(json!([]), &flags).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_prompt_arrives_in_system() {
    let replies = vec![
        Reply::sse("anthropic/text.sse"),
        Reply::sse("anthropic/text.sse"),
    ];
    let server = ProviderServer::start(replies).await;
    let app = app_for(&server, &[]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Hi").await;
    socket.until_run_end().await;
    let body = &server.requests()[0].body;
    assert_eq!(
        body["system"],
        tandem::agent::prompt::DEFAULT,
        "Tandem's own by default"
    );
    assert_eq!(
        body["messages"][0]["role"], "user",
        "never a system message"
    );

    let own = ProviderServer::start(vec![Reply::sse("anthropic/text.sse")]).await;
    let app = app_for(&own, &["--system-prompt", "You answer in French."]).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Hi").await;
    socket.until_run_end().await;
    assert_eq!(own.requests()[0].body["system"], "You answer in French.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_past_its_budget_sends_a_summary_and_its_newest_whole_turns() {
    let replies = ["text", "text", "tool_use", "text"]
        .map(|name| Reply::sse(&format!("anthropic/{name}.sse")))
        .to_vec();
    let server = ProviderServer::start(replies).await;
    let flags = [
        "--context-tokens",
        "1",
        "--context-strategy",
        "summarise",
        "--system-prompt",
        "Be brief.",
    ];
    let app = app_for(&server, &flags).await;
    let (session, mut socket) = app.open_session().await;
    for text in ["Hi there", "What is 6*7?"] {
        app.say(&session, text).await;
        socket.until_run_end().await;
    }
    let bodies: Vec<Value> = server.requests().iter().map(|r| r.body.clone()).collect();
    assert_eq!(bodies.len(), 4);
    assert_eq!(bodies[0]["system"], "Be brief.");
    let summary_call = &bodies[1];
    assert_eq!(
        summary_call["system"],
        tandem::agent::context::summary::INSTRUCTION
    );
    let transcript = summary_call["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(transcript.contains("Person: Hi there"), "{transcript}");
    assert!(transcript.contains("Bonjour"), "{transcript}");

    let summary = customs(&app.log(&session).await, "tandem.context_summary");
    assert_eq!(summary.len(), 1, "{summary:?}");
    let framed = tandem::agent::context::summary::framed(summary[0]["summary"].as_str().unwrap());
    let system = json!([
        {"type": "text", "text": "Be brief."},
        {"type": "text", "text": framed},
    ]);
    for body in &bodies[2..] {
        assert_eq!(body["system"], system, "the prompt, then the summary");
        assert_well_formed(&body["messages"]);
        assert_eq!(
            body["messages"][0]["content"][0]["text"], "What is 6*7?",
            "the first turn left out whole"
        );
    }
    let last = bodies[3]["messages"].as_array().unwrap();
    assert_eq!(last.len(), 3, "{last:?}");
    let call = last[1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_use")
        .unwrap()
        .clone();
    assert_eq!(
        last[2]["content"][0]["tool_use_id"], call["id"],
        "the tool_use travels with its tool_result"
    );
}
