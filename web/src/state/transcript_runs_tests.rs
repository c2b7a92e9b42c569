//! Tests of how a run's answer ended: cut off by a restart (the recovered run answers
//! again) or stopped by the person (the page offers to continue it). The events are those
//! the server's recovery and run loop write.

use serde_json::{json, Value};

use super::*;

fn step(kind: &str) -> Value {
    json!({"type": kind, "stepName": "model_call"})
}

fn recovered() -> Value {
    json!({"type": "CUSTOM", "name": "tandem.run_recovered",
           "value": {"runId": "r", "attempt": 1}})
}

/// The answers in order: text, interrupted, continuable.
fn answers(transcript: &Transcript) -> Vec<(String, bool, bool)> {
    transcript
        .items()
        .iter()
        .filter_map(|item| match &item.body {
            ItemBody::Assistant {
                text,
                interrupted,
                continuable,
                ..
            } => Some((text.clone(), *interrupted, *continuable)),
            _ => None,
        })
        .collect()
}

/// A run whose answer was streaming when Tandem stopped, as the next start repairs it:
/// the open text closed, the model call's step finished, then the marker.
fn cut_mid_answer() -> Vec<Value> {
    let mut events = vec![started()];
    events.extend(message("u1", "user", &["hello"]));
    events.push(step("STEP_STARTED"));
    // Its TEXT_MESSAGE_END and the STEP_FINISHED are the repair's.
    events.extend(message("a1", "assistant", &["Hi! I'm ", "Tandem's"]));
    events.push(step("STEP_FINISHED"));
    events.push(recovered());
    events
}

#[test]
fn an_answer_cut_off_by_a_restart_is_marked_and_the_continuation_is_the_answer() {
    let mut events = cut_mid_answer();
    events.push(step("STEP_STARTED"));
    events.extend(message("a2", "assistant", &["Hi! I'm Tandem's demo."]));
    events.push(step("STEP_FINISHED"));
    events.push(finished(json!({"type": "success"})));
    let transcript = fold(&events);
    assert_eq!(
        answers(&transcript),
        vec![
            ("Hi! I'm Tandem's".into(), true, false),
            ("Hi! I'm Tandem's demo.".into(), false, false),
        ]
    );
    let cut = transcript
        .items()
        .iter()
        .find(|i| i.is_interrupted())
        .unwrap();
    assert!(!cut.is_streaming());
    assert_eq!(transcript.run_state(), RunState::Idle);
}

#[test]
fn the_marker_reports_the_answers_it_marks() {
    let events = cut_mid_answer();
    let mut transcript = fold(&events[..events.len() - 1]);
    let marker: Event = serde_json::from_value(recovered()).unwrap();
    let touched = transcript.apply(events.len() as u64, &marker);
    assert_eq!(touched, vec![1], "the answer, after the person's message");
    assert!(transcript.items()[1].is_interrupted());
}

#[test]
fn a_call_the_model_was_still_writing_is_redone_with_the_text_before_it() {
    let mut events = vec![started(), step("STEP_STARTED")];
    events.extend(message("a1", "assistant", &["Let me save that."]));
    events.extend(tool_call("w1", "write_file", &[r#"{"path":"#]));
    // The recovery's error result comes before the step it closes finishes.
    events.push(result(
        "w1",
        r#"{"error":"the model was still writing this call"}"#,
    ));
    events.push(step("STEP_FINISHED"));
    events.push(recovered());
    assert_eq!(
        answers(&fold(&events)),
        vec![("Let me save that.".into(), true, false)]
    );
}

#[test]
fn an_answer_before_a_whole_tool_call_is_not_cut_off() {
    // The model call ended with a call written whole; Tandem stopped while it ran. The
    // continuation runs the call (or records its outcome as unknown) and goes on: the
    // text before it is not said again.
    let mut events = vec![started(), step("STEP_STARTED")];
    events.extend(message("a1", "assistant", &["Checking the date."]));
    events.extend(tool_call("k1", "clock", &["{}"]));
    events.push(step("STEP_FINISHED"));
    events.push(result(
        "k1",
        r#"{"error":"outcome unknown","outcomeUnknown":true}"#,
    ));
    events.push(recovered());
    assert_eq!(
        answers(&fold(&events)),
        vec![("Checking the date.".into(), false, false)]
    );
    // Nor is a question's hidden call: a whole request_input call is not redone either.
    let mut events = vec![started(), step("STEP_STARTED")];
    events.extend(message("a1", "assistant", &["Today is Friday."]));
    events.extend(tool_call(
        "q1",
        "request_input",
        &[r#"{"prompt":"Where?"}"#],
    ));
    events.push(step("STEP_FINISHED"));
    events.push(recovered());
    assert!(!answers(&fold(&events))[0].1);
}

#[test]
fn a_restart_between_runs_marks_nothing_from_the_run_before() {
    // A resumed run crashed in its tool phase, before any model call of its own.
    let mut events = vec![started(), step("STEP_STARTED")];
    events.extend(message("a1", "assistant", &["Where to?"]));
    events.push(step("STEP_FINISHED"));
    events.push(finished(json!({"type": "success"})));
    events.push(started());
    events.push(recovered());
    assert_eq!(
        answers(&fold(&events)),
        vec![("Where to?".into(), false, false)]
    );
}

#[test]
fn the_last_answer_of_a_stopped_run_is_continuable_until_a_run_starts() {
    let mut events = vec![started(), step("STEP_STARTED")];
    events.extend(message("a1", "assistant", &["First part."]));
    events.extend(tool_call("k1", "clock", &["{}"]));
    events.push(result("k1", "{}"));
    events.extend(message("a2", "assistant", &["Hi! Try one of"]));
    events.push(finished(json!({"type": "cancelled"})));
    let stopped = fold(&events);
    assert_eq!(
        answers(&stopped),
        vec![
            ("First part.".into(), false, false),
            ("Hi! Try one of".into(), false, true),
        ]
    );
    assert!(stopped.items().iter().any(|i| i.is_continuable()));

    events.push(started());
    let mut resumed = fold(&events);
    assert!(
        resumed.items().iter().any(Item::is_continuable),
        "a run that has done nothing yet may be a note's"
    );
    let call: Event = serde_json::from_value(step("STEP_STARTED")).unwrap();
    let touched = resumed.apply(events.len() as u64 + 1, &call);
    let stopped_at = resumed
        .items()
        .iter()
        .position(|i| i.key == "msg:a2")
        .unwrap();
    assert_eq!(
        touched,
        vec![stopped_at],
        "the stopped answer loses its mark"
    );
    assert!(!resumed.items().iter().any(Item::is_continuable));
}

/// A run's events with its own id.
fn run(id: &str, body: Vec<Value>, outcome: &str) -> Vec<Value> {
    let mut events = vec![json!({"type": "RUN_STARTED", "threadId": "t", "runId": id})];
    events.extend(body);
    events.push(json!({"type": "RUN_FINISHED", "threadId": "t", "runId": id,
                       "outcome": {"type": outcome}}));
    events
}

fn usage(output: u64) -> Value {
    json!({"type": "CUSTOM", "name": "tandem.usage", "value": {
        "inputTokens": 10, "outputTokens": output, "reasoningTokens": 0,
        "cachedInputTokens": 0, "costUsd": 0.0}})
}

fn continues(run: &str, message: &str) -> Value {
    json!({"type": "CUSTOM", "name": "tandem.continue",
           "value": {"runId": run, "messageId": message}})
}

/// A stopped run `r1`: the person's question and half an answer, `a1`.
fn stopped_half() -> Vec<Value> {
    let mut body = message("u1", "user", &["Tell me a story"]);
    body.push(step("STEP_STARTED"));
    body.extend(message("a1", "assistant", &["Once upon ", "a time"]));
    body.push(usage(4));
    body.push(step("STEP_FINISHED"));
    run("r1", body, "cancelled")
}

#[test]
fn a_continued_answer_is_one_answer_with_one_usage_line_and_no_stop_mark() {
    let mut events = stopped_half();
    let stopped = fold(&events);
    assert_eq!(stopped.stopped_run(), Some("r1"));
    let mut body = vec![continues("r1", "a1"), step("STEP_STARTED")];
    body.extend(message("a2", "assistant", &[", there was a cat."]));
    body.push(usage(6));
    body.push(step("STEP_FINISHED"));
    events.extend(run("r2", body, "success"));
    let transcript = fold(&events);
    assert_eq!(
        answers(&transcript),
        vec![("Once upon a time, there was a cat.".into(), false, false)]
    );
    let kinds: Vec<String> = transcript
        .items()
        .iter()
        .map(|item| match &item.body {
            ItemBody::Cancelled { continued } => format!("cancelled {continued}"),
            ItemBody::Usage(totals) => format!("usage {}", totals.output_tokens),
            _ => format!("{:?}", item.kind()),
        })
        .collect();
    assert_eq!(
        kinds,
        ["User", "Assistant", "usage 0", "cancelled true", "usage 10"],
        "the stop mark is hidden, the usage counted once under the continuation"
    );
    assert!(!transcript.items()[1].is_streaming());
    assert_eq!(transcript.stopped_run(), None);
    assert_eq!(transcript.run_state(), RunState::Idle);
}

#[test]
fn a_continuation_stopped_again_is_continued_again_into_the_same_answer() {
    let mut events = stopped_half();
    let mut body = vec![continues("r1", "a1"), step("STEP_STARTED")];
    body.extend(message("a2", "assistant", &[", there"]));
    events.extend(run("r2", body, "cancelled"));
    let stopped = fold(&events);
    assert_eq!(stopped.stopped_run(), Some("r2"));
    assert_eq!(
        answers(&stopped),
        vec![("Once upon a time, there".into(), false, true)]
    );
    let mut body = vec![continues("r2", "a2"), step("STEP_STARTED")];
    body.extend(message("a3", "assistant", &[" was a cat."]));
    events.extend(run("r3", body, "success"));
    assert_eq!(
        answers(&fold(&events)),
        vec![("Once upon a time, there was a cat.".into(), false, false)]
    );
}

#[test]
fn a_rating_after_a_stop_leaves_the_answer_continuable() {
    let mut events = stopped_half();
    let note = json!({"type": "CUSTOM", "name": "tandem.feedback",
                      "value": {"runId": "r1", "rating": "up", "user": "ada"}});
    events.extend(run("note", vec![note], "success"));
    let transcript = fold(&events);
    assert_eq!(transcript.stopped_run(), Some("r1"));
    assert!(transcript.items().iter().any(Item::is_continuable));
}

#[test]
fn only_a_stopped_run_with_an_answer_offers_to_continue() {
    let mut finished_run = vec![started()];
    finished_run.extend(message("a1", "assistant", &["Done."]));
    finished_run.push(finished(json!({"type": "success"})));
    assert!(!fold(&finished_run).items().iter().any(Item::is_continuable));

    // Stopped before it said anything: the answer of an earlier run is not continued.
    let mut silent = finished_run.clone();
    silent.push(started());
    silent.extend(message("u2", "user", &["again"]));
    silent.push(finished(json!({"type": "cancelled"})));
    assert!(!fold(&silent).items().iter().any(Item::is_continuable));
}
