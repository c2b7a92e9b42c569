use serde_json::json;

use super::*;

fn user(text: &str) -> ChatMessage {
    ChatMessage::user(text)
}

fn tool(name: &str, content: Value) -> ChatMessage {
    ChatMessage::Tool {
        tool_call_id: "c".into(),
        name: name.into(),
        content: content.to_string(),
    }
}

#[test]
fn arithmetic_uses_the_calculator_then_reports() {
    let first = next_turn(&[user("what is 12 * (3 + 4)?")]);
    assert_eq!(first.tool_calls[0].name, "calculator");
    assert_eq!(first.tool_calls[0].arguments["expression"], "12 * (3 + 4)");
    let second = next_turn(&[
        user("what is 12 * (3 + 4)?"),
        tool("calculator", json!({"result": 84.0})),
    ]);
    assert_eq!(second.text.as_deref(), Some("12 * (3 + 4) = 84"));
}

#[test]
fn a_trip_asks_a_choice_then_an_approval() {
    let ask = user("plan a trip");
    let clock = tool("clock", json!({"date": "Sunday"}));
    let choice = next_turn(&[ask.clone(), clock.clone()]);
    assert_eq!(choice.tool_calls[0].arguments["kind"], "choice");
    let picked = tool(
        "request_input",
        json!({"status": "resolved", "payload": {"choice": "Kyoto"}}),
    );
    let confirm = next_turn(&[ask.clone(), clock.clone(), picked.clone()]);
    assert_eq!(confirm.tool_calls[0].arguments["kind"], "confirm");
    let yes = tool(
        "request_input",
        json!({"status": "resolved", "payload": {"approved": true}}),
    );
    let plan = next_turn(&[ask, clock, picked, yes]);
    assert!(plan.text.unwrap().contains("Kyoto"));
}

#[test]
fn phrases_pick_the_input_kind() {
    let kind = |text: &str| next_turn(&[user(text)]).tool_calls[0].arguments["kind"].clone();
    assert_eq!(kind("delete my old files"), "confirm");
    assert_eq!(kind("please sign me up"), "form");
    assert_eq!(kind("ask me a question"), "text");
}

#[test]
fn unknown_messages_get_the_capabilities() {
    let reply = next_turn(&[user("hello")]);
    assert!(reply.tool_calls.is_empty());
    assert!(reply.text.unwrap().contains("plan a trip"));
}
