//! Tests of the transcript fold, fed with events as the server writes them.

use serde_json::{json, Value};
use shared::Event;

use super::*;
use crate::state::item::ToolStatus;

/// Folds JSON events numbered from 1 and returns the transcript.
fn fold(events: &[Value]) -> Transcript {
    let mut transcript = Transcript::default();
    for (n, event) in events.iter().enumerate() {
        let event: Event = serde_json::from_value(event.clone()).expect("a valid event");
        transcript.apply(n as u64 + 1, &event);
    }
    transcript
}

fn started() -> Value {
    json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
}

fn finished(outcome: Value) -> Value {
    json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": outcome})
}

fn message(id: &str, role: &str, deltas: &[&str]) -> Vec<Value> {
    let mut events = vec![json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": role})];
    for delta in deltas {
        events.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": delta}));
    }
    events.push(json!({"type": "TEXT_MESSAGE_END", "messageId": id}));
    events
}

fn tool_call(id: &str, name: &str, args: &[&str]) -> Vec<Value> {
    let mut events =
        vec![json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": name})];
    for delta in args {
        events.push(json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": delta}));
    }
    events.push(json!({"type": "TOOL_CALL_END", "toolCallId": id}));
    events
}

fn result(call: &str, content: &str) -> Value {
    json!({"type": "TOOL_CALL_RESULT", "messageId": "res", "toolCallId": call,
           "content": content, "role": "tool"})
}

fn choice_interrupt() -> Value {
    finished(json!({"type": "interrupt", "interrupts": [{
        "id": "q1", "reason": "input_required", "message": "Where to?", "toolCallId": "c1",
        "metadata": {"kind": "choice", "choices": ["Lisbon", "Kyoto"]}}]}))
}

/// A question asked in one run and answered in the next.
fn trip(answered: bool) -> Vec<Value> {
    let mut events = vec![started()];
    events.extend(message("u1", "user", &["plan a trip"]));
    events.extend(tool_call(
        "c1",
        "request_input",
        &[r#"{"prompt":"Where to?"}"#],
    ));
    events.push(choice_interrupt());
    if answered {
        events.push(started());
        events.push(result(
            "c1",
            r#"{"status":"resolved","payload":{"choice":"Lisbon"}}"#,
        ));
    }
    events
}

#[test]
fn streamed_text_accumulates_into_one_message() {
    let mut events = vec![started()];
    events.extend(message("u1", "user", &["hi"]));
    events.extend(message("a1", "assistant", &["Hello", " there"]));
    let transcript = fold(&events);
    let bodies: Vec<_> = transcript.items().iter().map(|i| i.body.clone()).collect();
    assert_eq!(
        bodies,
        vec![
            ItemBody::User {
                text: "hi".into(),
                view_start: false,
                summary: None,
                attachments: Vec::new(),
            },
            ItemBody::Assistant {
                text: "Hello there".into(),
                streaming: false,
                interrupted: false,
                continuable: false,
                rating: None,
                last_of_run: true,
            },
        ]
    );
    assert_eq!(transcript.run_state(), RunState::Running);
}

#[test]
fn apply_reports_only_the_touched_item_and_skips_seen_seqs() {
    let mut transcript = fold(&message("a1", "assistant", &["Hel"])[..2]);
    let delta: Event = serde_json::from_value(
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "lo"}),
    )
    .unwrap();
    assert_eq!(transcript.apply(3, &delta), vec![0]);
    assert_eq!(transcript.apply(3, &delta), Vec::<usize>::new());
    assert_eq!(transcript.apply(2, &delta), Vec::<usize>::new());
    assert_eq!(
        transcript.items()[0].body,
        ItemBody::Assistant {
            text: "Hello".into(),
            streaming: true,
            interrupted: false,
            continuable: false,
            rating: None,
            last_of_run: true,
        }
    );
    assert_eq!(transcript.last_seq(), 3);
}

#[test]
fn reasoning_messages_fold_into_their_span() {
    let transcript = fold(&[
        started(),
        json!({"type": "REASONING_START", "messageId": "s1"}),
        json!({"type": "REASONING_MESSAGE_START", "messageId": "m1", "role": "reasoning"}),
        json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "m1", "delta": "Think"}),
        json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "m1", "delta": "ing"}),
        json!({"type": "REASONING_MESSAGE_END", "messageId": "m1"}),
    ]);
    assert_eq!(transcript.items().len(), 1);
    assert_eq!(transcript.items()[0].key, "reasoning:s1");
    assert_eq!(
        transcript.items()[0].body,
        ItemBody::Reasoning {
            text: "Thinking".into(),
            streaming: true
        }
    );
    let mut done = fold(&[
        started(),
        json!({"type": "REASONING_START", "messageId": "s1"}),
        json!({"type": "REASONING_END", "messageId": "s1"}),
    ]);
    assert!(matches!(
        done.items()[0].body,
        ItemBody::Reasoning {
            streaming: false,
            ..
        }
    ));
    let step: Event =
        serde_json::from_value(json!({"type": "STEP_STARTED", "stepName": "model_call"})).unwrap();
    assert!(done.apply(9, &step).is_empty());
}

#[test]
fn tool_calls_concatenate_args_and_take_status_from_the_result() {
    let mut events = vec![started()];
    events.extend(tool_call(
        "t1",
        "calculator",
        &[r#"{"expr""#, r#":"12*7"}"#],
    ));
    events.push(result("t1", r#"{"ok":84}"#));
    events.extend(tool_call("t2", "clock", &["{}"]));
    events.push(result("t2", r#"{"error":"no clock"}"#));
    events.extend(tool_call("t3", "slow", &["{}"]));
    let transcript = fold(&events);
    let calls: Vec<_> = transcript
        .items()
        .iter()
        .map(|item| match &item.body {
            ItemBody::ToolCall(call) => (call.name.as_str(), call.status()),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("calculator", ToolStatus::Done),
            ("clock", ToolStatus::Error),
            ("slow", ToolStatus::Running)
        ]
    );
    let ItemBody::ToolCall(first) = &transcript.items()[0].body else {
        unreachable!()
    };
    assert_eq!(first.args, r#"{"expr":"12*7"}"#);
}

#[test]
fn a_call_s_progress_shows_on_its_card_until_its_result() {
    let mut events = vec![started()];
    events.extend(tool_call("t1", "everything__index", &["{}"]));
    events.push(
        json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "act_1", "activityType": "progress",
        "content": {"toolCallId": "t1", "progress": 1, "total": 4}}),
    );
    let progress = |transcript: &Transcript| match &transcript.items()[0].body {
        ItemBody::ToolCall(call) => call.progress(),
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(progress(&fold(&events)), Some((Some(25), "1 of 4".into())));
    events.push(
        json!({"type": "ACTIVITY_DELTA", "messageId": "act_1", "activityType": "progress",
        "patch": [{"op": "replace", "path": "/progress", "value": 3},
                  {"op": "add", "path": "/message", "value": "indexing"}]}),
    );
    assert_eq!(
        progress(&fold(&events)),
        Some((Some(75), "3 of 4 — indexing".into()))
    );
    // Another kind of activity, or one for no card, changes nothing.
    events.push(
        json!({"type": "ACTIVITY_SNAPSHOT", "messageId": "act_2", "activityType": "plan",
        "content": {"toolCallId": "t1", "progress": 0}}),
    );
    events.push(
        json!({"type": "ACTIVITY_DELTA", "messageId": "act_9", "activityType": "progress",
        "patch": [{"op": "replace", "path": "/progress", "value": 0}]}),
    );
    assert_eq!(progress(&fold(&events)).unwrap().1, "3 of 4 — indexing");
    events.push(result("t1", r#"{"ok":true}"#));
    assert_eq!(
        progress(&fold(&events)),
        None,
        "the result replaces the bar"
    );
}

#[test]
fn an_interrupt_is_a_card_not_a_tool_call_and_waits() {
    let transcript = fold(&trip(false));
    assert_eq!(transcript.run_state(), RunState::Awaiting);
    let last = transcript.items().last().unwrap();
    assert_eq!(last.key, "interrupt:q1");
    let ItemBody::Interrupt(card) = &last.body else {
        panic!("not an interrupt")
    };
    assert_eq!(card.answer, None);
    assert_eq!(card.control.kind_name(), "choice");
    assert!(!transcript
        .items()
        .iter()
        .any(|item| matches!(item.body, ItemBody::ToolCall(_))));
}

#[test]
fn the_tool_result_answers_the_card() {
    let transcript = fold(&trip(true));
    let ItemBody::Interrupt(card) = &transcript.items().last().unwrap().body else {
        panic!("not an interrupt")
    };
    let answer = card.answer.as_ref().expect("answered");
    assert_eq!(
        (answer.is_resolved(), answer.summary.as_str()),
        (true, "Lisbon")
    );
    assert_eq!(transcript.run_state(), RunState::Running);
}

#[test]
fn run_errors_and_cancels_become_markers_and_close_open_items() {
    let mut events = vec![started()];
    events.extend(message("a1", "assistant", &["half"])[..2].to_vec());
    events.extend(tool_call("t1", "slow", &["{}"]));
    events.push(finished(json!({"type": "cancelled"})));
    events.push(started());
    events.push(json!({"type": "RUN_ERROR", "message": "model down", "code": "engine_error"}));
    let transcript = fold(&events);
    let bodies: Vec<_> = transcript.items().iter().map(|i| &i.body).collect();
    assert!(matches!(
        bodies[0],
        ItemBody::Assistant {
            streaming: false,
            ..
        }
    ));
    assert!(matches!(bodies[1], ItemBody::ToolCall(call) if call.status() == ToolStatus::Error));
    assert_eq!(bodies[2], &ItemBody::Cancelled { continued: false });
    assert_eq!(
        bodies[3],
        &ItemBody::RunError {
            message: "model down".into(),
            code: Some("engine_error".into())
        }
    );
    assert_eq!(transcript.run_state(), RunState::Idle);
}

#[test]
fn an_expired_question_settles_as_expired_and_the_run_goes_on() {
    let mut events = trip(false);
    events.push(started());
    events.push(result(
        "c1",
        r#"{"status":"expired","error":"the person did not answer before the deadline"}"#,
    ));
    events.extend(message("a2", "assistant", &["No answer, moving on."]));
    let transcript = fold(&events);
    let card = transcript
        .items()
        .iter()
        .find_map(|item| match &item.body {
            ItemBody::Interrupt(card) => Some(card),
            _ => None,
        })
        .expect("a question card");
    let answer = card.answer.as_ref().expect("settled");
    assert_eq!(answer.outcome.as_str(), "expired");
    assert_eq!(
        answer.summary,
        "Expired — the agent went on without your answer"
    );
    assert_eq!(
        transcript.items().last().unwrap().text(),
        "No answer, moving on."
    );
    assert_eq!(transcript.run_state(), RunState::Running);
}

#[path = "transcript_approval_tests.rs"]
mod approval;

#[path = "transcript_input_tests.rs"]
mod input;

#[path = "transcript_runs_tests.rs"]
mod runs;

#[test]
fn a_queued_run_shows_its_place_until_its_next_event() {
    let queued = json!({"type": "CUSTOM", "name": "tandem.run_queued",
        "value": {"runId": "r", "position": 2}});
    let t = fold(&[started(), queued.clone()]);
    assert_eq!(t.queued(), Some(2));
    assert_eq!(t.run_state(), RunState::Running);
    let t = fold(&[
        started(),
        queued,
        json!({"type": "STEP_STARTED", "stepName": "model_call"}),
    ]);
    assert_eq!(t.queued(), None);
}

fn usage(input: u64, output: u64, cost: Option<f64>) -> Value {
    let mut value = json!({"inputTokens": input, "outputTokens": output});
    if let Some(cost) = cost {
        value["costUsd"] = json!(cost);
    }
    json!({"type": "CUSTOM", "name": "tandem.usage", "value": value})
}

#[test]
fn usage_adds_up_live_per_run_and_per_session_and_ends_each_run_with_a_footer() {
    let mut events = vec![started()];
    events.extend(message("m1", "assistant", &["Hi"]));
    events.push(usage(100, 10, Some(0.5)));
    let live = fold(&events);
    let run = live.run_usage().expect("a run is active");
    assert_eq!((run.calls, run.input_tokens, run.cost_usd), (1, 100, 0.5));

    events.push(usage(50, 5, None));
    events.push(finished(json!({"type": "success"})));
    events.push(started());
    events.push(usage(1, 1, Some(0.25)));
    events.push(finished(json!({"type": "success"})));
    let done = fold(&events);
    assert_eq!(done.run_usage(), None, "no run is active");
    let session = done.usage();
    assert_eq!(
        (session.calls, session.input_tokens, session.output_tokens),
        (3, 151, 16)
    );
    assert_eq!((session.cost_usd, session.unpriced_calls), (0.75, 1));
    let footers: Vec<UsageTotals> = done
        .items()
        .iter()
        .filter_map(|item| match item.body {
            ItemBody::Usage(totals) => Some(totals),
            _ => None,
        })
        .collect();
    assert_eq!(footers.len(), 2, "one per run");
    assert_eq!((footers[0].calls, footers[0].input_tokens), (2, 150));
    assert_eq!((footers[1].calls, footers[1].input_tokens), (1, 1));
}

#[test]
fn a_run_without_usage_gets_no_footer_and_junk_usage_is_ignored() {
    let mut events = vec![started()];
    events.push(json!({"type": "CUSTOM", "name": "tandem.usage", "value": "junk"}));
    events.push(finished(json!({"type": "success"})));
    let done = fold(&events);
    assert!(done.items().is_empty(), "{:?}", done.items());
    assert_eq!(done.usage().calls, 0);
}

#[test]
fn the_row_where_a_branch_parts_is_the_first_one_after_its_seq() {
    let mut t = Transcript::default();
    let events = [
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "u1", "role": "user"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "u1", "delta": "Hi"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "u1"}),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}),
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "u2", "role": "user"}),
    ];
    for (seq, event) in events.iter().enumerate() {
        t.apply(
            seq as u64 + 1,
            &serde_json::from_value(event.clone()).unwrap(),
        );
    }
    assert_eq!(t.first_key_after(0), Some("msg:u1"));
    assert_eq!(
        t.first_key_after(5),
        Some("msg:u2"),
        "after the first run's end"
    );
    assert_eq!(t.first_key_after(7), None, "nothing after the end yet");
}

#[test]
fn a_message_s_attachments_hang_on_it() {
    let mut events = vec![started()];
    events.extend(message("u1", "user", &["look"]));
    events.push(json!({"type": "CUSTOM", "name": "tandem.attachments", "value": {
        "messageId": "u1",
        "attachments": [{"id": "att_1", "name": "cat.png", "mediaType": "image/png", "bytes": 12, "sha256": "ab"}]}}));
    events.push(
        json!({"type": "CUSTOM", "name": "tandem.attachments", "value": {
        "messageId": "nobody", "attachments": []}}),
    );
    let transcript = fold(&events);
    let ItemBody::User { attachments, .. } = &transcript.items()[0].body else {
        panic!("not the person's message")
    };
    assert_eq!(attachments.len(), 1);
    assert_eq!(attachments[0].name, "cat.png");
}

#[test]
fn a_rating_marks_the_last_answer_of_its_run_and_the_latest_rating_stands() {
    let mut events = vec![started()];
    events.extend(message("a1", "assistant", &["Let me check."]));
    events.extend(message("a2", "assistant", &["Done."]));
    events.push(finished(json!({"type": "success"})));
    let rating = |rating: &str| {
        json!({"type": "CUSTOM", "name": "tandem.feedback",
               "value": {"runId": "r", "rating": rating, "user": "local"}})
    };
    events.push(rating("up"));
    events.push(rating("down"));
    let transcript = fold(&events);
    let answers: Vec<(bool, Option<shared::feedback::Rating>)> = transcript
        .items()
        .iter()
        .filter(|item| matches!(item.body, ItemBody::Assistant { .. }))
        .map(|item| (item.is_last_of_run(), item.rating()))
        .collect();
    assert_eq!(
        answers,
        [(false, None), (true, Some(shared::feedback::Rating::Down))]
    );
}
