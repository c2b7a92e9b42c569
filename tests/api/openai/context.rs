//! The context window against the OpenAI stand-in: a session grown past the budget sends
//! only its newest whole turns (the request bodies show it), keeps a tool call with its
//! result, and records where the model's view begins; the log keeps everything.

use super::app::app_with;
use super::*;
use crate::helpers::customs;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_past_its_budget_sends_its_newest_whole_turns() {
    let replies = vec![
        Reply::sse("openai/text.sse"),
        Reply::sse("openai/tool_call.sse"),
        Reply::sse("openai/text_after_tool.sse"),
    ];
    let flags = ["--context-tokens", "1", "--system-prompt", ""];
    let (app, server) = app_with(replies, &flags).await;
    let (session, mut socket) = app.open_session().await;
    app.say(&session, "Hi there").await;
    socket.until_run_end().await;
    app.say(&session, "What is 6*7?").await;
    socket.until_run_end().await;

    let sent: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["messages"].clone())
        .collect();
    assert_eq!(sent[0], json!([{"role": "user", "content": "Hi there"}]));
    assert_eq!(
        sent[1],
        json!([{"role": "user", "content": "What is 6*7?"}]),
        "the first turn left out whole"
    );
    let latest = sent[2].as_array().unwrap();
    assert_eq!(latest.len(), 3, "the latest turn goes whole: {latest:?}");
    assert_eq!(latest[0]["content"], "What is 6*7?");
    let call_id = &latest[1]["tool_calls"][0]["id"];
    assert_eq!(
        &latest[2]["tool_call_id"], call_id,
        "a call travels with its result"
    );

    let log = app.log(&session).await;
    let marks: Vec<&Value> = log
        .iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::Custom { name, value } if name == "tandem.context_trimmed" => Some(value),
            _ => None,
        })
        .collect();
    assert_eq!(
        marks.len(),
        1,
        "recorded once, when the view moved: {marks:?}"
    );
    assert_eq!(marks[0]["firstUserMessage"], 1);
    assert_eq!(marks[0]["droppedMessages"], 2);
    let texts: Vec<&str> = log
        .iter()
        .filter_map(|(_, e)| match &e.body {
            EventBody::TextMessageContent { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(texts.contains(&"Hi there"), "the log keeps everything");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summarised_turns_travel_ahead_of_the_kept_ones_and_are_asked_for_once() {
    let replies = [
        "text",            // turn 1
        "text",            // the summary of turn 1
        "tool_call",       // turn 2
        "text_after_tool", // turn 2, after the calculator
        "text_after_tool", // the summary of turns 1-2 (the first summary, then turn 2)
        "text",            // turn 3
    ]
    .map(|name| Reply::sse(&format!("openai/{name}.sse")))
    .to_vec();
    let flags = [
        "--context-tokens",
        "1",
        "--system-prompt",
        "",
        "--context-strategy",
        "summarise",
    ];
    let (app, server) = app_with(replies, &flags).await;
    let (session, mut socket) = app.open_session().await;
    for text in ["Hi there", "What is 6*7?", "Thanks"] {
        app.say(&session, text).await;
        socket.until_run_end().await;
    }
    let bodies: Vec<Value> = server.requests().iter().map(|r| r.body.clone()).collect();
    assert_eq!(bodies.len(), 6, "one summary call per move of the view");
    let first = "Hello! How can I help you today?";
    let summary_call = &bodies[1];
    assert_eq!(
        summary_call["messages"][0]["content"],
        tandem::agent::context::summary::INSTRUCTION
    );
    let transcript = summary_call["messages"][1]["content"].as_str().unwrap();
    assert!(
        transcript.contains("Person: Hi there") && transcript.contains(first),
        "{transcript}"
    );
    assert!(
        summary_call.get("tools").is_none(),
        "a summary call offers no tools"
    );

    let framed = |summary: &str| tandem::agent::context::summary::framed(summary);
    let head = json!({"role": "system", "content": framed(first)});
    assert_eq!(
        bodies[2]["messages"],
        json!([head, {"role": "user", "content": "What is 6*7?"}]),
        "the summary, then the kept turn"
    );
    let after_tool = bodies[3]["messages"].as_array().unwrap();
    assert_eq!(after_tool[0], head, "reused from the log, not asked again");
    assert_eq!(after_tool.len(), 4, "{after_tool:?}");
    assert_eq!(
        after_tool[3]["tool_call_id"], after_tool[2]["tool_calls"][0]["id"],
        "a call travels with its result"
    );

    let second = bodies[4]["messages"][1]["content"].as_str().unwrap();
    assert!(
        second.starts_with(&format!("Summary so far:\n{first}")),
        "the earlier summary is built on: {second}"
    );
    assert!(second.contains("Assistant called calculator("), "{second}");
    assert!(second.contains("Result of calculator:"), "{second}");

    let log = app.log(&session).await;
    let summaries = customs(&log, "tandem.context_summary");
    assert_eq!(summaries.len(), 2, "{summaries:?}");
    assert_eq!(summaries[0]["firstUserMessage"], 1);
    assert_eq!(summaries[0]["summary"], first);
    let latest = summaries[1]["summary"].as_str().unwrap().to_string();
    assert_eq!(
        bodies[5]["messages"][0],
        json!({"role": "system", "content": framed(&latest)})
    );
    assert_eq!(
        bodies[5]["messages"][1],
        json!({"role": "user", "content": "Thanks"})
    );
    let marks = customs(&log, "tandem.context_trimmed");
    assert_eq!(marks.len(), 2);
    assert_eq!(marks[1]["firstUserMessage"], 2);
}
