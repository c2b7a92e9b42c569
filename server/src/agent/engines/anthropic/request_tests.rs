//! Unit tests of what a call sends: the request body and the headers.

use std::time::Duration;

use serde_json::json;

use super::{headers, request};
use crate::agent::conversation::{ChatMessage, ReasoningBlock, ToolCallRecord};
use crate::agent::engines::ModelRequest;
use crate::agent::tools::ToolSpec;
use crate::config::ProviderSettings;
use crate::config::RetryPolicy;
use crate::domain::Secret;

fn settings() -> ProviderSettings {
    ProviderSettings {
        base_url: "http://127.0.0.1:1".into(),
        api_key: Some("sk-ant-unit".parse::<Secret>().unwrap()),
        model: "claude-sonnet-4-5".into(),
        temperature: None,
        max_tokens: 4096,
        thinking_budget: None,
        extra_headers: vec![],
        connect_timeout: Duration::from_secs(1),
        read_timeout: Duration::from_secs(1),
        retry: RetryPolicy {
            max_retries: 0,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
        },
    }
}

fn user(text: &str) -> ChatMessage {
    ChatMessage::user(text)
}

fn assistant(reasoning: Vec<ReasoningBlock>, text: &str, calls: &[(&str, &str)]) -> ChatMessage {
    ChatMessage::Assistant {
        reasoning,
        text: text.into(),
        tool_calls: calls
            .iter()
            .map(|(id, arguments)| ToolCallRecord {
                id: (*id).into(),
                name: "calculator".into(),
                arguments: (*arguments).into(),
            })
            .collect(),
    }
}

fn result(id: &str, content: &str) -> ChatMessage {
    ChatMessage::Tool {
        tool_call_id: id.into(),
        name: "calculator".into(),
        content: content.into(),
    }
}

fn thinking(text: &str, signature: Option<&str>) -> ReasoningBlock {
    ReasoningBlock::Thinking {
        text: text.into(),
        signature: signature.map(str::to_string),
    }
}

#[test]
fn the_body_carries_model_tools_and_thinking_but_no_temperature_with_thinking() {
    let mut settings = settings();
    settings.temperature = Some(0.7);
    let tool = ToolSpec {
        name: "clock".into(),
        description: "The time.".into(),
        parameters: json!({"type": "object"}),
    };
    let request = ModelRequest {
        temperature: None,
        system: None,
        model: None,
        summary: None,
        conversation: vec![user("hi")],
        tools: vec![tool],
        model_call_index: 0,
    };
    let body = request::body(&settings, &request);
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["stream"], true);
    assert_eq!(body["temperature"], json!(0.7));
    assert_eq!(
        body["tools"],
        json!([{"name": "clock", "description": "The time.", "input_schema": {"type": "object"}}])
    );
    assert!(body.get("thinking").is_none());

    settings.thinking_budget = Some(2048);
    let request = ModelRequest {
        temperature: None,
        system: None,
        model: None,
        summary: None,
        tools: vec![],
        ..request
    };
    let body = request::body(&settings, &request);
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert!(body.get("temperature").is_none());
    assert!(body.get("tools").is_none(), "no tools, no `tools`");
}

#[test]
fn assistant_turns_put_signed_thinking_first_then_text_then_tool_use() {
    let turn = assistant(
        vec![
            thinking("unsigned, from another engine", None),
            thinking("Compute it.", Some("sig-1")),
            ReasoningBlock::Redacted {
                data: "EmwKAhgB".into(),
            },
        ],
        "Let me compute.",
        &[("toolu_1", r#"{"expression":"6*7"}"#), ("toolu_2", "")],
    );
    let messages = request::messages(&[user("6*7?"), turn, result("toolu_1", "42")]);
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Compute it.", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "EmwKAhgB"},
            {"type": "text", "text": "Let me compute."},
            {"type": "tool_use", "id": "toolu_1", "name": "calculator", "input": {"expression": "6*7"}},
            {"type": "tool_use", "id": "toolu_2", "name": "calculator", "input": {}},
        ]})
    );
}

#[test]
fn tool_results_and_a_following_user_message_merge_into_one_user_turn() {
    let messages = request::messages(&[
        user("go"),
        assistant(vec![], "", &[("toolu_1", "{}"), ("toolu_2", "[1]")]),
        result("toolu_1", r#"{"result":1}"#),
        result("toolu_2", r#"{"error":"stopped"}"#),
        user("and now?"),
    ]);
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(
        messages[1]["content"][1]["input"],
        json!({}),
        "not an object"
    );
    assert_eq!(
        messages[2]["content"],
        json!([
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": r#"{"result":1}"#},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": r#"{"error":"stopped"}"#, "is_error": true},
            {"type": "text", "text": "and now?"},
        ])
    );
}

#[test]
fn empty_turns_are_never_sent() {
    let messages = request::messages(&[
        user("first"),
        assistant(vec![thinking("unsigned", None)], "", &[]),
        user(""),
        user("second"),
    ]);
    assert_eq!(
        messages,
        vec![json!({"role": "user", "content": [
            {"type": "text", "text": "first"},
            {"type": "text", "text": "second"},
        ]})]
    );
}

#[test]
fn headers_carry_key_version_and_extras_and_refuse_bad_ones() {
    let mut settings = settings();
    settings.extra_headers = vec![
        ("anthropic-beta".into(), "a-2025-01-01".into()),
        ("anthropic-beta".into(), "b-2025-01-01".into()),
    ];
    let map = headers(&settings).unwrap();
    assert_eq!(map["x-api-key"], "sk-ant-unit");
    assert!(map["x-api-key"].is_sensitive());
    assert_eq!(map["anthropic-version"], "2023-06-01");
    assert_eq!(map["accept"], "text/event-stream");
    assert_eq!(map.get_all("anthropic-beta").iter().count(), 2);

    settings.extra_headers = vec![("bad header".into(), "x".into())];
    assert!(headers(&settings).unwrap_err().contains("bad header"));
    settings.extra_headers = vec![];
    settings.api_key = Some("sk-ant-\nnewline".parse::<Secret>().unwrap());
    let error = headers(&settings).unwrap_err();
    assert!(!error.contains("sk-ant"), "{error}");
}
