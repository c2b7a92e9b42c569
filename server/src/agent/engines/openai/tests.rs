//! Unit tests of the request body, the headers and the chunk decoder's corner cases
//! (servers that drift from OpenAI's shape). Whole fixture streams are tested in
//! `tests/api/openai.rs`.

use std::time::Duration;

use eventsource_stream::Event as SseEvent;
use serde_json::{json, Value};

use super::request;
use super::stream::ChunkDecoder;
use super::*;
use crate::agent::conversation::{ChatMessage, ReasoningBlock, ToolCallRecord};
use crate::agent::engines::sse::Decoder;
use crate::agent::engines::{EngineEvent, FinishReason};
use crate::agent::tools::ToolSpec;
use crate::domain::Secret;

fn settings() -> ProviderSettings {
    ProviderSettings {
        base_url: "http://user:pass@127.0.0.1:9/v1".into(),
        api_key: Some("sk-unit-secret".parse::<Secret>().unwrap()),
        model: "gpt-4.1-mini".into(),
        temperature: Some(0.7),
        max_tokens: 512,
        thinking_budget: None,
        extra_headers: vec![("X-Team".into(), "tandem".into())],
        connect_timeout: Duration::from_secs(1),
        read_timeout: Duration::from_secs(1),
        retry: crate::config::RetryPolicy {
            max_retries: 0,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
        },
    }
}

/// Feeds `data` payloads (one SSE event each) and returns the events and the outcome.
fn decode(payloads: &[Value]) -> (Vec<EngineEvent>, Result<bool, EngineError>) {
    let mut decoder = ChunkDecoder::new("the test server".into(), "m".into());
    let mut out = Vec::new();
    let mut result = Ok(false);
    for payload in payloads {
        let data = match payload {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let event = SseEvent {
            data,
            ..SseEvent::default()
        };
        result = decoder.decode(&event, &mut out);
        if !matches!(result, Ok(false)) {
            break;
        }
    }
    (out, result)
}

fn delta(delta: Value) -> Value {
    let choice = json!({"index": 0, "delta": delta, "finish_reason": null});
    json!({"object": "chat.completion.chunk", "choices": [choice]})
}

fn finish(reason: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

fn start(id: &str, name: &str) -> EngineEvent {
    EngineEvent::ToolCallStart {
        id: id.into(),
        name: name.into(),
    }
}

fn args(id: &str, delta: &str) -> EngineEvent {
    EngineEvent::ToolCallArgs {
        id: id.into(),
        delta: delta.into(),
    }
}

fn end(id: &str) -> EngineEvent {
    EngineEvent::ToolCallEnd { id: id.into() }
}

/// A question, a call with no arguments, its result, the answer.
fn model_request() -> ModelRequest {
    let call = ToolCallRecord {
        id: "call_1".into(),
        name: "clock".into(),
        arguments: String::new(),
    };
    let thinking = ReasoningBlock::Thinking {
        text: "hmm".into(),
        signature: None,
    };
    let conversation = vec![
        ChatMessage::user("hi"),
        ChatMessage::Assistant {
            reasoning: vec![thinking],
            text: String::new(),
            tool_calls: vec![call],
        },
        ChatMessage::Tool {
            tool_call_id: "call_1".into(),
            name: "clock".into(),
            content: "{\"now\":1}".into(),
        },
        ChatMessage::Assistant {
            reasoning: vec![],
            text: "It is 1.".into(),
            tool_calls: vec![],
        },
    ];
    let tool = ToolSpec {
        name: "clock".into(),
        description: "the time".into(),
        parameters: json!({"type": "object"}),
    };
    ModelRequest {
        temperature: None,
        system: None,
        model: None,
        summary: None,
        conversation,
        tools: vec![tool],
        model_call_index: 1,
    }
}

#[test]
fn the_body_has_the_documented_shape() {
    let body = request::body(&model_request(), &settings());
    let function = json!({"name": "clock", "arguments": "{}"});
    let call = json!({"id": "call_1", "type": "function", "function": function});
    let tool =
        json!({"name": "clock", "description": "the time", "parameters": {"type": "object"}});
    let expected = json!({
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"now\":1}"},
            {"role": "assistant", "content": "It is 1."}
        ],
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": 512,
        "temperature": 0.7,
        "tools": [{"type": "function", "function": tool}]
    });
    assert_eq!(body, expected);
    assert!(body.to_string().contains("\"temperature\":0.7,"));
}

#[test]
fn tools_and_temperature_are_left_out_when_unset() {
    let bare = ModelRequest {
        temperature: None,
        system: None,
        model: None,
        summary: None,
        tools: vec![],
        ..model_request()
    };
    let no_temperature = ProviderSettings {
        temperature: None,
        ..settings()
    };
    let body = request::body(&bare, &no_temperature);
    assert!(body.get("tools").is_none() && body.get("temperature").is_none());
}

#[test]
fn headers_carry_the_key_once_and_error_messages_never() {
    let map = headers(&settings()).unwrap();
    assert_eq!(map["authorization"], "Bearer sk-unit-secret");
    assert!(map["authorization"].is_sensitive());
    assert_eq!(map["x-team"], "tandem");
    assert_eq!(map["accept"], "text/event-stream");
    let bad = ProviderSettings {
        api_key: Some("sk-unit\u{7}secret".parse().unwrap()),
        ..settings()
    };
    let error = headers(&bad).unwrap_err();
    assert!(!error.message.contains("secret"), "{}", error.message);
    let bad_name = ProviderSettings {
        extra_headers: vec![("X Bad".into(), "v".into())],
        ..settings()
    };
    assert_eq!(headers(&bad_name).unwrap_err().code, "provider_config");
}

#[test]
fn the_provider_is_named_without_credentials() {
    assert_eq!(provider_name(OPENAI_URL), "OpenAI");
    let named = provider_name(&settings().base_url);
    assert_eq!(named, "the OpenAI-compatible server at 127.0.0.1:9");
}

#[test]
fn a_whole_call_in_one_fragment_without_an_id_still_streams() {
    let (events, done) = decode(&[
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"name": "clock", "arguments": "{}"}}]}),
        ),
        finish("tool_calls"),
        json!("[DONE]"),
    ]);
    assert_eq!(done, Ok(true));
    let EngineEvent::ToolCallStart { id, .. } = &events[0] else {
        panic!("{events:?}")
    };
    assert!(id.starts_with("call_"), "{id}");
    assert_eq!(
        events,
        [
            start(id, "clock"),
            args(id, "{}"),
            end(id),
            EngineEvent::Finish(FinishReason::ToolCalls)
        ]
    );
}

#[test]
fn calls_without_index_or_with_reused_ids_stay_apart() {
    let (events, _) = decode(&[
        delta(
            json!({"tool_calls": [{"id": "c", "function": {"name": "a", "arguments": "{\"x\""}}]}),
        ),
        delta(json!({"tool_calls": [{"function": {"arguments": ":1}"}}]})),
        delta(json!({"tool_calls": [{"id": "c", "index": 1, "function": {"name": "b"}}]})),
        delta(json!({"tool_calls": [{"index": 0, "id": "d", "function": {"name": "e"}}]})),
        json!("[DONE]"),
    ]);
    let ids: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::ToolCallStart { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 3, "{events:?}");
    assert_eq!(ids[0], "c");
    assert!(ids[1].starts_with("call_"), "a reused id gets a fresh one");
    assert_eq!(ids[2], "d");
    assert_eq!(events[1], args("c", "{\"x\""));
    assert_eq!(events[2], args("c", ":1}"));
}

#[test]
fn arguments_before_the_name_wait_for_it_and_nothing_follows_an_end() {
    let (events, _) = decode(&[
        delta(json!({"tool_calls": [{"index": 0, "id": "c1", "function": {"arguments": "{"}}]})),
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"name": "clock", "arguments": "}"}}]}),
        ),
        finish("tool_calls"),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "late"}}]})),
        json!("[DONE]"),
    ]);
    assert_eq!(
        events,
        [
            start("c1", "clock"),
            args("c1", "{"),
            args("c1", "}"),
            end("c1"),
            EngineEvent::Finish(FinishReason::ToolCalls)
        ]
    );
}

#[test]
fn reasoning_is_read_once_from_either_field_and_ends_before_text() {
    let (events, _) = decode(&[
        delta(json!({"reasoning_content": "a", "reasoning": "a"})),
        delta(json!({"reasoning": "b", "content": ""})),
        delta(json!({"content": "Hi", "reasoning_content": null})),
        finish("stop"),
        json!("[DONE]"),
    ]);
    assert_eq!(
        events,
        [
            EngineEvent::ReasoningDelta("a".into()),
            EngineEvent::ReasoningDelta("b".into()),
            EngineEvent::ReasoningEnd { signature: None },
            EngineEvent::TextDelta("Hi".into()),
            EngineEvent::Finish(FinishReason::Stop)
        ]
    );
}

#[test]
fn the_last_usage_is_reported_before_the_finish() {
    let usage = |n: u64| {
        let mut usage = json!({"prompt_tokens": 5, "completion_tokens": n});
        usage["completion_tokens_details"] = json!({"reasoning_tokens": 2});
        usage["prompt_tokens_details"] = json!({"cached_tokens": 4});
        json!({"choices": [], "model": "o4-mini", "usage": usage})
    };
    let (events, _) = decode(&[finish("length"), usage(3), usage(7), json!("[DONE]")]);
    let expected = shared::usage::CallUsage {
        provider: Some("openai".into()),
        model: Some("o4-mini".into()),
        input_tokens: 5,
        output_tokens: 7,
        reasoning_tokens: 2,
        cached_input_tokens: 4,
        cost_usd: None,
        finish_reason: None,
        retries: 0,
    };
    assert_eq!(
        events,
        [
            EngineEvent::Usage(expected),
            EngineEvent::Finish(FinishReason::Length)
        ]
    );
}

#[test]
fn finish_reasons_map_and_unknown_ones_pass_through() {
    for (reason, expected) in [
        ("function_call", FinishReason::ToolCalls),
        (
            "content_filter",
            FinishReason::Other("content_filter".into()),
        ),
    ] {
        let (events, _) = decode(&[finish(reason), json!("[DONE]")]);
        assert_eq!(events, [EngineEvent::Finish(expected)]);
    }
}

#[test]
fn errors_in_the_stream_fail_the_call() {
    let (_, result) =
        decode(&[json!({"error": {"message": "Provider disconnected", "code": 502}})]);
    let error = result.unwrap_err();
    assert_eq!(error.code, "provider_error");
    assert!(error.message.contains("Provider disconnected"), "{error}");
    let (_, result) = decode(&[json!("{\"choices\": [")]);
    assert_eq!(result.unwrap_err().code, "malformed_response");
    let (events, result) =
        decode(&[json!({"id": "x", "choices": null, "usage": null, "new_field": 1})]);
    assert_eq!((events, result), (vec![], Ok(false)));
}
