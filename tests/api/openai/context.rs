//! The context window against the OpenAI stand-in: a session grown past the budget sends
//! only its newest whole turns (the request bodies show it), keeps a tool call with its
//! result, and records where the model's view begins; the log keeps everything.

use super::app::app_with;
use super::*;

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
