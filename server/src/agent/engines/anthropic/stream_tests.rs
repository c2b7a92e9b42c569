//! Unit tests of the stream decoder: SSE events in, engine events out, no server.

use eventsource_stream::Event as SseEvent;
use serde_json::{json, Value};

use super::stream::AnthropicDecoder;
use crate::agent::engines::sse::Decoder;
use crate::agent::engines::{EngineError, EngineEvent, FinishReason};

/// Decodes `(event name, data)` pairs; stops at the first error.
fn decode(events: &[(&str, Value)]) -> (Vec<EngineEvent>, Result<bool, EngineError>) {
    let mut decoder = AnthropicDecoder::default();
    let mut out = Vec::new();
    let mut last = Ok(false);
    for (name, data) in events {
        let event = SseEvent {
            event: (*name).into(),
            data: data.to_string(),
            ..SseEvent::default()
        };
        last = decoder.decode(&event, &mut out);
        if last.is_err() {
            break;
        }
    }
    (out, last)
}

fn block_start(index: u64, block: Value) -> (&'static str, Value) {
    let data = json!({"type": "content_block_start", "index": index, "content_block": block});
    ("content_block_start", data)
}

fn block_delta(index: u64, delta: Value) -> (&'static str, Value) {
    let data = json!({"type": "content_block_delta", "index": index, "delta": delta});
    ("content_block_delta", data)
}

fn block_stop(index: u64) -> (&'static str, Value) {
    let data = json!({"type": "content_block_stop", "index": index});
    ("content_block_stop", data)
}

fn message_end(stop_reason: &str) -> [(&'static str, Value); 2] {
    [
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 9}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

#[test]
fn thinking_collects_its_signature_and_ends_with_it() {
    let mut events = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {"model": "claude-x", "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 1}}}),
        ),
        block_start(
            0,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        block_delta(0, json!({"type": "thinking_delta", "thinking": "Hmm."})),
        block_delta(0, json!({"type": "signature_delta", "signature": "EqQB"})),
        block_stop(0),
        ("ping", json!({"type": "ping"})),
    ];
    events.extend(message_end("max_tokens"));
    let (out, done) = decode(&events);
    assert_eq!(done, Ok(true));
    assert_eq!(
        out[..2],
        [
            EngineEvent::ReasoningDelta("Hmm.".into()),
            EngineEvent::ReasoningEnd {
                signature: Some("EqQB".into())
            },
        ]
    );
    let EngineEvent::Usage(usage) = &out[2] else {
        panic!("{out:?}")
    };
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cached_input_tokens
        ),
        (15, 9, 5)
    );
    assert_eq!(usage.model.as_deref(), Some("claude-x"));
    assert_eq!(out[3], EngineEvent::Finish(FinishReason::Length));
}

#[test]
fn unknown_events_blocks_and_deltas_are_skipped() {
    let mut events = vec![
        ("future_event", json!("not even an object")),
        block_start(0, json!({"type": "server_tool_use", "id": "srvtoolu_1"})),
        block_delta(0, json!({"type": "input_json_delta", "partial_json": "{}"})),
        block_stop(0),
        block_start(1, json!({"type": "text", "text": ""})),
        block_delta(1, json!({"type": "citations_delta", "citation": {}})),
        block_delta(1, json!({"type": "text_delta", "text": "Hi"})),
        block_stop(1),
    ];
    events.extend(message_end("pause_turn"));
    let (out, done) = decode(&events);
    assert_eq!(done, Ok(true));
    assert_eq!(out[0], EngineEvent::TextDelta("Hi".into()));
    assert_eq!(
        out.last(),
        Some(&EngineEvent::Finish(FinishReason::Other(
            "pause_turn".into()
        )))
    );
}

#[test]
fn broken_streams_are_malformed_and_error_events_are_provider_errors() {
    let (_, bad_json) = decode(&[("content_block_delta", json!("{nope"))]);
    assert_eq!(bad_json.unwrap_err().code, "malformed_response");
    let (_, not_open) = decode(&[block_delta(3, json!({"type": "text_delta", "text": "x"}))]);
    assert_eq!(not_open.unwrap_err().code, "malformed_response");
    let (_, mismatch) = decode(&[
        block_start(0, json!({"type": "text", "text": ""})),
        block_delta(0, json!({"type": "input_json_delta", "partial_json": "{"})),
    ]);
    assert!(mismatch.unwrap_err().message.contains("input_json_delta"));
    let error =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let (_, failed) = decode(&[("error", error)]);
    let failed = failed.unwrap_err();
    assert_eq!(failed.code, "provider_error");
    assert!(failed.message.contains("overloaded_error"), "{failed}");
}

#[test]
fn tool_use_streams_its_input_and_closes_blocks_left_open() {
    let mut events = vec![
        block_start(
            0,
            json!({"type": "tool_use", "id": "toolu_1", "name": "clock", "input": {}}),
        ),
        block_delta(0, json!({"type": "input_json_delta", "partial_json": ""})),
        block_delta(0, json!({"type": "input_json_delta", "partial_json": "{}"})),
        block_start(
            1,
            json!({"type": "tool_use", "id": "toolu_2", "name": "clock", "input": {"tz": "UTC"}}),
        ),
    ];
    events.extend(message_end("tool_use"));
    let (out, _) = decode(&events);
    let args = |id: &str, delta: &str| EngineEvent::ToolCallArgs {
        id: id.into(),
        delta: delta.into(),
    };
    assert_eq!(
        out[..6],
        [
            EngineEvent::ToolCallStart {
                id: "toolu_1".into(),
                name: "clock".into()
            },
            args("toolu_1", "{}"),
            EngineEvent::ToolCallStart {
                id: "toolu_2".into(),
                name: "clock".into()
            },
            EngineEvent::ToolCallEnd {
                id: "toolu_1".into()
            },
            args("toolu_2", r#"{"tz":"UTC"}"#),
            EngineEvent::ToolCallEnd {
                id: "toolu_2".into()
            },
        ]
    );
    assert_eq!(out[7], EngineEvent::Finish(FinishReason::ToolCalls));
}
