//! `AnthropicEngine` on its own: the events each fixture becomes and the exact request
//! it sends.

use std::time::Duration;

use serde_json::json;
use tandem::agent::conversation::{ChatMessage, ReasoningBlock, ToolCallRecord};
use tandem::agent::engines::{EngineEvent, FinishReason};

use super::{assert_well_formed, collect, request, say, settings, text_of, BETA, KEY};
use crate::helpers::provider::{fixture, ProviderServer, Reply};

const SIGNATURE: &str = "EqQBCkYIBxgCKkCb8v3m0kX7Lk1kZ2l2ZW4gYSBzaWduYXR1cmUgZm9yIHRoZSB0aGlua2luZyBibG9jaxIMdGFuZGVtLXRlc3QaDGxvY2FsLWZpeHR1cmU=";

fn finish(events: &[EngineEvent]) -> Option<&FinishReason> {
    match events.last() {
        Some(EngineEvent::Finish(reason)) => Some(reason),
        _ => None,
    }
}

#[tokio::test]
async fn plain_text_streams_as_text_with_usage_and_the_request_is_complete() {
    let server = ProviderServer::start(vec![Reply::sse("anthropic/text.sse")]).await;
    let (events, error) = collect(settings(&server.url), say("Hello")).await;
    assert_eq!(error, None);
    assert_eq!(text_of(&events), "Bonjour — ça va ? Tout est prêt 👋");
    let EngineEvent::Usage(usage) = &events[3] else {
        panic!("{events:?}")
    };
    assert_eq!((usage.input_tokens, usage.output_tokens), (25, 15));
    assert_eq!(finish(&events), Some(&FinishReason::Stop));

    let sent = &server.requests()[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
    assert_eq!(sent.header(BETA.0), Some(BETA.1));
    assert_eq!(sent.body["model"], "claude-sonnet-4-5");
    assert_eq!(
        (&sent.body["max_tokens"], &sent.body["stream"]),
        (&json!(1024), &json!(true))
    );
    assert_eq!(sent.body["temperature"], json!(0.5));
    assert_eq!(
        sent.body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Hello"}]}])
    );
    assert_eq!(sent.body["tools"][0]["name"], "request_input");
    assert!(sent.body["tools"][0]["input_schema"].is_object());
}

#[tokio::test]
async fn thinking_streams_before_text_and_ends_with_its_signature() {
    let server = ProviderServer::start(vec![Reply::sse("anthropic/thinking.sse")]).await;
    let mut thinking = settings(&server.url);
    thinking.thinking_budget = Some(2048);
    let (events, error) = collect(thinking, say("27 * 453?")).await;
    assert_eq!(error, None);
    let reasoning: String = events
        .iter()
        .take_while(|e| matches!(e, EngineEvent::ReasoningDelta(_)))
        .map(|e| match e {
            EngineEvent::ReasoningDelta(text) => text.as_str(),
            _ => unreachable!(),
        })
        .collect();
    assert!(reasoning.ends_with("Total 12231."), "{reasoning}");
    assert_eq!(
        events[3],
        EngineEvent::ReasoningEnd {
            signature: Some(SIGNATURE.into())
        }
    );
    assert_eq!(text_of(&events), "27 * 453 = 12,231.");
    let body = &server.requests()[0].body;
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert!(
        body.get("temperature").is_none(),
        "no temperature with thinking"
    );
}

#[tokio::test]
async fn redacted_thinking_comes_through_whole() {
    let server = ProviderServer::start(vec![Reply::sse("anthropic/redacted_thinking.sse")]).await;
    let (events, error) = collect(settings(&server.url), say("hi")).await;
    assert_eq!(error, None);
    assert!(
        matches!(&events[0], EngineEvent::RedactedReasoning { data } if data.starts_with("EmwKAhgB"))
    );
    assert!(matches!(&events[1], EngineEvent::ReasoningDelta(_)));
    assert!(matches!(
        &events[2],
        EngineEvent::ReasoningEnd { signature: Some(_) }
    ));
    assert_eq!(text_of(&events), "Here is my answer.");
}

#[tokio::test]
async fn a_tool_call_streams_its_input_in_pieces() {
    let server = ProviderServer::start(vec![Reply::sse("anthropic/tool_use.sse")]).await;
    let (events, error) = collect(settings(&server.url), say("(12+30)*4?")).await;
    assert_eq!(error, None);
    let id = "toolu_01T1x1fJ34qAmk2tNTrN7Up6";
    let start = events
        .iter()
        .position(|e| matches!(e, EngineEvent::ToolCallStart { .. }))
        .expect("a tool call");
    assert_eq!(
        events[start],
        EngineEvent::ToolCallStart {
            id: id.into(),
            name: "calculator".into()
        }
    );
    let pieces: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::ToolCallArgs { id: of, delta } if of == id => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(pieces.len(), 8, "empty pieces are skipped");
    assert_eq!(pieces.concat(), r#"{"expression": "(12 + 30) * 4"}"#);
    assert_eq!(
        events[start + 9],
        EngineEvent::ToolCallEnd { id: id.into() }
    );
    assert_eq!(finish(&events), Some(&FinishReason::ToolCalls));
}

#[tokio::test]
async fn two_tool_calls_in_one_message_stay_apart() {
    let server = ProviderServer::start(vec![Reply::sse("anthropic/two_tool_uses.sse")]).await;
    let (events, _) = collect(settings(&server.url), say("time and 6*7")).await;
    let calls: Vec<&EngineEvent> = events
        .iter()
        .filter(|e| !matches!(e, EngineEvent::Usage(_) | EngineEvent::Finish(_)))
        .collect();
    let (first, second) = (
        "toolu_01A09q90qw90lq917835lq9",
        "toolu_01B8sK2mQ7vN4pR6tW9yZ3cD",
    );
    assert_eq!(
        calls[0],
        &EngineEvent::ToolCallStart {
            id: first.into(),
            name: "calculator".into()
        }
    );
    assert_eq!(calls[3], &EngineEvent::ToolCallEnd { id: first.into() });
    assert_eq!(
        calls[4],
        &EngineEvent::ToolCallStart {
            id: second.into(),
            name: "clock".into()
        }
    );
    assert_eq!(
        calls[5],
        &EngineEvent::ToolCallArgs {
            id: second.into(),
            delta: "{}".into()
        }
    );
    assert_eq!(calls[6], &EngineEvent::ToolCallEnd { id: second.into() });
}

#[tokio::test]
async fn sse_split_at_any_byte_gives_the_same_events() {
    for name in ["text", "thinking", "tool_use", "redacted_thinking"] {
        let path = format!("anthropic/{name}.sse");
        let split = Reply::Sse {
            body: fixture(&path),
            split_every: Some(5),
            pace: Duration::ZERO,
            cut_after: None,
        };
        let server = ProviderServer::start(vec![Reply::sse(&path), split]).await;
        let whole = collect(settings(&server.url), say("x")).await;
        let pieces = collect(settings(&server.url), say("x")).await;
        assert_eq!(whole.1, None, "{name}");
        assert_eq!(pieces, whole, "{name}");
    }
}

#[tokio::test]
async fn the_request_after_tools_and_an_answer_follows_the_api_rules() {
    let call = |id: &str, name: &str, arguments: &str| ToolCallRecord {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    };
    let result = |id: &str, content: &str| ChatMessage::Tool {
        tool_call_id: id.into(),
        name: String::new(),
        content: content.into(),
    };
    let conversation = vec![
        ChatMessage::user("6*7, then ask me"),
        ChatMessage::Assistant {
            reasoning: vec![
                ReasoningBlock::Thinking {
                    text: "from elsewhere".into(),
                    signature: None,
                },
                ReasoningBlock::Thinking {
                    text: "Calculate.".into(),
                    signature: Some("sig-a".into()),
                },
            ],
            text: String::new(),
            tool_calls: vec![
                call("toolu_a", "calculator", r#"{"expression":"6*7"}"#),
                call("toolu_b", "clock", ""),
            ],
        },
        result("toolu_a", r#"{"expression":"6*7","result":42}"#),
        result(
            "toolu_b",
            r#"{"error":"no result was recorded for this call"}"#,
        ),
        ChatMessage::Assistant {
            reasoning: vec![ReasoningBlock::Redacted {
                data: "EmwKAhgB".into(),
            }],
            text: "It is 42.".into(),
            tool_calls: vec![call(
                "toolu_c",
                "request_input",
                r#"{"prompt":"Name?","kind":"text"}"#,
            )],
        },
        result(
            "toolu_c",
            r#"{"status":"resolved","payload":{"text":"Ada"}}"#,
        ),
        ChatMessage::user("Also, hello."),
    ];
    let server = ProviderServer::start(vec![Reply::sse("anthropic/text.sse")]).await;
    collect(settings(&server.url), request(conversation)).await;
    let messages = &server.requests()[0].body["messages"];
    assert_well_formed(messages);
    assert_eq!(messages.as_array().unwrap().len(), 5);
    assert_eq!(
        messages[1]["content"][0],
        json!({"type": "thinking", "thinking": "Calculate.", "signature": "sig-a"})
    );
    assert_eq!(messages[1]["content"][2]["input"], json!({}));
    assert_eq!(messages[2]["content"][1]["is_error"], true);
    assert_eq!(messages[3]["content"][0]["type"], "redacted_thinking");
    assert_eq!(messages[3]["content"][2]["input"]["kind"], "text");
    assert_eq!(
        messages[4]["content"][1],
        json!({"type": "text", "text": "Also, hello."})
    );
}
