use serde_json::{json, Value};

use super::*;
use crate::agui::Event;

/// A log from JSON events, each `[timestamp, event]`.
fn read(events: &[(i64, Value)], content: bool) -> Vec<RunTimeline> {
    let mut timeline = Timeline::new(content);
    for (index, (at, event)) in events.iter().enumerate() {
        let mut event = event.clone();
        event["timestamp"] = json!(at);
        let event: Event = serde_json::from_value(event).expect("an event");
        timeline.observe(index as u64 + 1, &event);
    }
    timeline.into_runs()
}

fn custom(name: &str, value: Value) -> Value {
    json!({"type": "CUSTOM", "name": name, "value": value})
}

fn step(started: bool) -> Value {
    let kind = if started {
        "STEP_STARTED"
    } else {
        "STEP_FINISHED"
    };
    json!({"type": kind, "stepName": "model_call"})
}

/// A run that calls a tool, asks a question, waits a day and a half for the answer, and
/// goes on in a second run whose model call falls back to another model.
fn paused_and_answered() -> Vec<(i64, Value)> {
    let usage = |model: &str| {
        custom(
            crate::custom::USAGE,
            json!({"provider": "openai", "model": model,
            "inputTokens": 10, "outputTokens": 5, "finishReason": "tool_calls"}),
        )
    };
    vec![
        (
            1_000,
            json!({"type": "RUN_STARTED", "threadId": "s", "runId": "r1"}),
        ),
        (
            1_000,
            json!({"type": "TEXT_MESSAGE_START", "messageId": "u1", "role": "user"}),
        ),
        (
            1_000,
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "u1", "delta": "add 2 and 3"}),
        ),
        (
            1_000,
            json!({"type": "TEXT_MESSAGE_END", "messageId": "u1"}),
        ),
        (
            1_000,
            custom(
                crate::custom::TRACE_CONTEXT,
                json!({"traceparent": "00-abc-def-01"}),
            ),
        ),
        (1_010, step(true)),
        (
            1_200,
            json!({"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"}),
        ),
        (
            1_200,
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "Adding."}),
        ),
        (
            1_210,
            json!({"type": "TEXT_MESSAGE_END", "messageId": "a1"}),
        ),
        (
            1_300,
            json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "calculator"}),
        ),
        (
            1_300,
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{\"expression\":\"2+3\"}"}),
        ),
        (1_300, json!({"type": "TOOL_CALL_END", "toolCallId": "c1"})),
        (1_390, usage("gpt-a")),
        (1_400, step(false)),
        (
            1_450,
            json!({"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": "{\"value\":5}"}),
        ),
        (1_460, step(true)),
        (
            1_500,
            json!({"type": "TOOL_CALL_START", "toolCallId": "c2", "toolCallName": "request_input"}),
        ),
        (1_500, json!({"type": "TOOL_CALL_END", "toolCallId": "c2"})),
        (1_550, step(false)),
        (
            1_560,
            json!({"type": "RUN_FINISHED", "threadId": "s", "runId": "r1", "outcome":
            {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "input_required", "toolCallId": "c2"}]}}),
        ),
        (
            130_000_000,
            json!({"type": "RUN_STARTED", "threadId": "s", "runId": "r2"}),
        ),
        (
            130_000_000,
            json!({"type": "TOOL_CALL_RESULT", "messageId": "t2", "toolCallId": "c2",
            "content": "{\"status\":\"resolved\",\"payload\":\"yes\"}"}),
        ),
        (130_000_010, step(true)),
        (
            130_000_100,
            custom(
                crate::custom::MODEL_FALLBACK,
                json!({"from": "gpt-a", "to": "gpt-b",
            "code": "rate_limited", "message": "busy"}),
            ),
        ),
        (
            130_000_300,
            json!({"type": "TEXT_MESSAGE_START", "messageId": "a2", "role": "assistant"}),
        ),
        (
            130_000_300,
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a2", "delta": "Done: 5."}),
        ),
        (
            130_000_310,
            json!({"type": "TEXT_MESSAGE_END", "messageId": "a2"}),
        ),
        (130_000_390, usage("gpt-b")),
        (130_000_400, step(false)),
        (
            130_000_410,
            json!({"type": "RUN_FINISHED", "threadId": "s", "runId": "r2"}),
        ),
    ]
}

#[test]
fn model_calls_tools_and_a_wait_get_their_times_from_the_log() {
    let runs = read(&paused_and_answered(), false);
    assert_eq!(runs.len(), 2);
    let first = &runs[0];
    assert_eq!((first.started_ms, first.ended_ms), (1_000, Some(1_560)));
    assert_eq!(first.end, RunEnd::Paused);
    assert_eq!(first.trace_parent.as_deref(), Some("00-abc-def-01"));
    assert_eq!(first.input_text, None, "no content unless asked");
    let spans: Vec<(&str, i64, Option<i64>)> = first
        .items
        .iter()
        .map(|item| {
            let kind = match &item.detail {
                ItemDetail::Model(_) => "model",
                ItemDetail::Tool(tool) => tool.name.as_str(),
                ItemDetail::Wait(_) => "wait",
            };
            (kind, item.start_ms, item.end_ms)
        })
        .collect();
    assert_eq!(
        spans,
        [
            ("model", 1_010, Some(1_400)),
            ("calculator", 1_400, Some(1_450)),
            ("model", 1_460, Some(1_550)),
            ("wait", 1_560, Some(130_000_000)),
        ],
        "request_input is the wait, not a tool run"
    );
    let ItemDetail::Model(call) = &first.items[0].detail else {
        panic!("a model call")
    };
    assert_eq!(call.first_chunk_ms, Some(1_200));
    assert_eq!(call.tool_calls, 1);
    assert_eq!(call.model(), Some("gpt-a"));
    let usage = call.usage.as_ref().expect("usage");
    assert_eq!(usage.finish_reason.as_deref(), Some("tool_calls"));
    let ItemDetail::Wait(wait) = &first.items[3].detail else {
        panic!("a wait")
    };
    assert_eq!(wait.answer.as_deref(), Some("resolved"));
    assert_eq!(wait.answered_by_run_id.as_deref(), Some("r2"));
    assert_eq!(first.usage().input_tokens, 10);

    let second = &runs[1];
    assert_eq!(second.resumes_run_id.as_deref(), Some("r1"));
    assert_eq!(second.end, RunEnd::Succeeded);
    assert_eq!(second.items.len(), 2, "{:?}", second.items);
    let (ItemDetail::Model(failed), ItemDetail::Model(fallback)) =
        (&second.items[0].detail, &second.items[1].detail)
    else {
        panic!("two attempts")
    };
    assert_eq!(
        (second.items[0].start_ms, second.items[0].end_ms),
        (130_000_010, Some(130_000_100))
    );
    assert_eq!(failed.model(), Some("gpt-a"));
    assert_eq!(failed.error.as_deref(), Some("rate_limited"));
    assert_eq!(failed.fallback_to.as_deref(), Some("gpt-b"));
    assert_eq!(fallback.fallback_from.as_deref(), Some("gpt-a"));
    assert_eq!(fallback.model(), Some("gpt-b"));
    assert_eq!(fallback.first_chunk_ms, Some(130_000_300));
}

#[test]
fn content_is_kept_only_when_asked() {
    let runs = read(&paused_and_answered(), true);
    assert_eq!(runs[0].input_text.as_deref(), Some("add 2 and 3"));
    let ItemDetail::Tool(tool) = &runs[0].items[1].detail else {
        panic!("the tool")
    };
    assert_eq!(tool.arguments.as_deref(), Some("{\"expression\":\"2+3\"}"));
    assert_eq!(tool.result.as_deref(), Some("{\"value\":5}"));
    assert!(!tool.failed);
    let ItemDetail::Model(call) = &runs[1].items[1].detail else {
        panic!("the answer")
    };
    assert_eq!(call.output_text.as_deref(), Some("Done: 5."));
    assert_eq!(runs[1].input_text, None, "an answer is not a message");
}

#[test]
fn approvals_errors_and_failed_runs_are_told_apart() {
    let events = vec![
        (
            10,
            json!({"type": "RUN_STARTED", "threadId": "s", "runId": "r1"}),
        ),
        (20, step(true)),
        (
            30,
            json!({"type": "TOOL_CALL_START", "toolCallId": "w", "toolCallName": "write_file"}),
        ),
        (30, json!({"type": "TOOL_CALL_END", "toolCallId": "w"})),
        (40, step(false)),
        (
            50,
            json!({"type": "RUN_FINISHED", "threadId": "s", "runId": "r1", "outcome":
            {"type": "interrupt", "interrupts": [{"id": "i9", "reason": "tool_approval", "toolCallId": "w"}]}}),
        ),
        (
            5_000,
            json!({"type": "RUN_STARTED", "threadId": "s", "runId": "r2"}),
        ),
        (
            5_000,
            custom(
                crate::custom::TOOL_APPROVAL,
                json!({"interruptId": "i9", "toolCallId": "w",
            "approved": true, "edited": false}),
            ),
        ),
        (
            5_900,
            json!({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "w",
            "content": "{\"error\":\"disk full\"}"}),
        ),
        (6_000, step(true)),
        (
            6_500,
            json!({"type": "RUN_ERROR", "message": "provider down", "code": "provider_unavailable"}),
        ),
    ];
    let runs = read(&events, false);
    let ItemDetail::Wait(wait) = &runs[0].items[1].detail else {
        panic!("the wait")
    };
    assert_eq!(wait.answer.as_deref(), Some("approved"));
    assert_eq!(runs[0].items[1].duration_ms(), Some(4_950));
    let tool = &runs[1].items[0];
    assert_eq!(
        (tool.start_ms, tool.end_ms),
        (5_000, Some(5_900)),
        "from the approval"
    );
    assert!(matches!(&tool.detail, ItemDetail::Tool(run) if run.failed));
    assert!(
        matches!(&runs[1].end, RunEnd::Failed { code: Some(code), .. } if code == "provider_unavailable")
    );
    let ItemDetail::Model(call) = &runs[1].items[1].detail else {
        panic!("the failed call")
    };
    assert_eq!(runs[1].items[1].end_ms, Some(6_500));
    assert_eq!(call.error.as_deref(), Some("provider_unavailable"));
}

#[test]
fn a_wait_still_open_has_no_end() {
    let mut events = paused_and_answered();
    events.truncate(20);
    let runs = read(&events, false);
    assert_eq!(runs.len(), 1);
    let wait = runs[0].items.last().expect("the wait");
    assert_eq!(wait.end_ms, None);
    assert!(matches!(&wait.detail, ItemDetail::Wait(w) if w.answer.is_none()));
}
