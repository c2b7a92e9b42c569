//! The kill harness's checks against hand-made logs: each rule must catch the failure it
//! is there for, and a correct repair must pass. Without these a harness that never
//! finds anything would look the same as a server that never breaks.

use serde_json::{json, Value};

use super::log_checks::{assert_viewer_saw_the_log, continued_after_kill, recovery_rules};
use super::tool_checks::{check_file, check_recoveries, check_results};

/// A log under construction; events get the current timestamp.
#[derive(Default)]
struct Log {
    events: Vec<(u64, Value)>,
    now: i64,
}

impl Log {
    fn at(&mut self, now: i64) -> &mut Self {
        self.now = now;
        self
    }

    fn push(&mut self, kind: &str, fields: Value) -> &mut Self {
        let mut event = json!({"type": kind, "timestamp": self.now});
        event
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        self.events.push((self.events.len() as u64 + 1, event));
        self
    }

    /// A run that streamed one call of `tool` and finished its model call.
    fn call_made(tool: &str) -> Self {
        let mut log = Log::default();
        log.at(1)
            .push("RUN_STARTED", json!({"threadId": "t", "runId": "r1"}))
            .push("STEP_STARTED", json!({"stepName": "model_call"}))
            .push(
                "TOOL_CALL_START",
                json!({"toolCallId": "c1", "toolCallName": tool}),
            )
            .push(
                "TOOL_CALL_ARGS",
                json!({"toolCallId": "c1", "delta": r#"{"line":"l1"}"#}),
            )
            .push("TOOL_CALL_END", json!({"toolCallId": "c1"}))
            .push("STEP_FINISHED", json!({"stepName": "model_call"}));
        log
    }

    fn result(&mut self, content: Value) -> &mut Self {
        self.push(
            "TOOL_CALL_RESULT",
            json!({"toolCallId": "c1", "content": content.to_string()}),
        )
    }

    fn marker(&mut self, attempt: u64) -> &mut Self {
        let value = json!({"runId": "r1", "attempt": attempt});
        self.push(
            "CUSTOM",
            json!({"name": "tandem.run_recovered", "value": value}),
        )
    }

    /// The continuation: a model call, then the run finishes.
    fn finish(&mut self) -> &mut Self {
        self.push("STEP_STARTED", json!({"stepName": "model_call"}))
            .push("STEP_FINISHED", json!({"stepName": "model_call"}))
            .push("RUN_FINISHED", json!({"threadId": "t", "runId": "r1"}))
    }

    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        recovery_rules("s", &self.events, &mut problems);
        check_results("s", &self.events, &mut Default::default(), &mut problems);
        check_recoveries("s", &self.events, &mut problems);
        problems
    }
}

fn unknown() -> Value {
    json!({"error": "outcome unknown", "outcomeUnknown": true})
}

#[test]
fn a_correct_repair_passes() {
    let mut log = Log::call_made("append_file");
    log.at(2).result(unknown()).marker(1).at(3).finish();
    assert_eq!(log.problems(), Vec::<String>::new());
    let mut log = Log::call_made("calculator");
    log.at(2)
        .marker(1)
        .at(3)
        .result(json!({"result": 1}))
        .finish();
    assert_eq!(log.problems(), Vec::<String>::new());
}

#[test]
fn a_running_append_run_again_is_caught() {
    let mut log = Log::call_made("append_file");
    log.at(2)
        .marker(1)
        .at(3)
        .result(json!({"appended": "f"}))
        .finish();
    assert!(log
        .problems()
        .iter()
        .any(|p| p.contains("left to run again")));
}

#[test]
fn an_idempotent_call_not_run_again_is_caught() {
    let mut log = Log::call_made("clock");
    log.at(2).result(unknown()).marker(1).at(3).finish();
    let problems = log.problems();
    assert!(
        problems.iter().any(|p| p.contains("idempotent")),
        "{problems:?}"
    );
}

#[test]
fn old_style_endings_and_bad_markers_are_caught() {
    let mut log = Log::call_made("clock");
    log.at(2).result(json!({"error": "stopped"}));
    log.push("RUN_ERROR", json!({"message": "m", "code": "interrupted"}));
    assert!(log
        .problems()
        .iter()
        .any(|p| p.contains("RUN_ERROR interrupted")));
    let mut log = Log::call_made("clock");
    log.at(2).marker(2).at(3).result(json!({})).finish();
    assert!(log
        .problems()
        .iter()
        .any(|p| p.contains("attempt 2 where 1")));
    let mut log = Log::call_made("clock");
    log.at(2).marker(1).at(3).result(json!({}));
    log.push("RUN_FINISHED", json!({"threadId": "t", "runId": "r1"}));
    assert!(log
        .problems()
        .iter()
        .any(|p| p.contains("without a model call")));
    let mut log = Log::call_made("clock");
    log.at(2).marker(1).at(3).marker(2).at(4);
    log.push(
        "RUN_ERROR",
        json!({"message": "m", "code": "recovery_limit"}),
    );
    assert!(log
        .problems()
        .iter()
        .any(|p| p.contains("recovery_limit after 2")));
}

#[test]
fn a_second_result_and_a_missing_result_are_caught() {
    let mut log = Log::call_made("clock");
    log.at(2).result(json!({})).result(json!({})).finish();
    assert!(log.problems().iter().any(|p| p.contains("second result")));
    let mut log = Log::call_made("clock");
    log.push("RUN_FINISHED", json!({"threadId": "t", "runId": "r1"}));
    assert!(log
        .problems()
        .iter()
        .any(|p| p.contains("never got a result")));
}

#[test]
fn a_line_written_more_often_than_its_calls_is_caught() {
    let mut log = Log::call_made("append_file");
    log.at(2).result(json!({"appended": "f"})).finish();
    let (mut lines, mut problems) = (Default::default(), Vec::new());
    check_results("s", &log.events, &mut lines, &mut problems);
    assert_eq!(check_file("l1\n", &lines, &mut problems), 1);
    assert!(problems.is_empty(), "{problems:?}");
    check_file("l1\nl1\n", &lines, &mut problems);
    assert!(problems.iter().any(|p| p.contains("ran twice")));
    check_file("", &lines, &mut problems);
    assert!(problems
        .iter()
        .any(|p| p.contains("1 successful calls but 0")));
}

#[test]
#[should_panic(expected = "the viewer saw")]
fn a_frame_that_differs_from_the_log_is_caught() {
    let log = Log::call_made("clock").events;
    let mut seen = log.clone();
    seen[2].1["toolCallName"] = json!("calculator");
    assert_viewer_saw_the_log("s", &seen, &log);
}

#[test]
fn a_run_in_flight_at_a_kill_must_be_continued() {
    // Killed at 1 ms, mid-call: the next process (stamps 2, 3) continues the run.
    let mut log = Log::call_made("clock");
    log.at(2).marker(1).at(3).result(json!({})).finish();
    let mut problems = Vec::new();
    assert!(continued_after_kill(
        "s",
        &log.events,
        1,
        true,
        &mut problems
    ));
    assert!(problems.is_empty(), "{problems:?}");
    // Closing the run instead of continuing it is caught.
    let mut log = Log::call_made("clock");
    log.at(2).result(json!({"error": "stopped"}));
    log.push("RUN_FINISHED", json!({"threadId": "t", "runId": "r1"}));
    assert!(continued_after_kill(
        "s",
        &log.events,
        1,
        true,
        &mut problems
    ));
    assert!(
        problems.iter().any(|p| p.contains("was in flight")),
        "{problems:?}"
    );
    // A kill after the run ended needs nothing.
    let mut problems = Vec::new();
    assert!(!continued_after_kill(
        "s",
        &log.events,
        5,
        true,
        &mut problems
    ));
    assert!(problems.is_empty(), "{problems:?}");
    // A kill of another instance than the run's asks nothing of the run.
    let mut log = Log::call_made("clock");
    log.at(2).result(json!({})).finish();
    assert!(!continued_after_kill(
        "s",
        &log.events,
        1,
        false,
        &mut problems
    ));
    assert!(problems.is_empty(), "{problems:?}");
}

/// The person's messages `texts`, in order, as a log.
fn said(texts: &[&str]) -> Vec<(u64, Value)> {
    let mut log = Log::default();
    for (n, text) in texts.iter().enumerate() {
        let id = format!("m{n}");
        log.push(
            "TEXT_MESSAGE_START",
            json!({"messageId": id, "role": "user"}),
        )
        .push(
            "TEXT_MESSAGE_CONTENT",
            json!({"messageId": id, "delta": text}),
        )
        .push("TEXT_MESSAGE_END", json!({"messageId": id}));
    }
    log.events
}

#[test]
fn queued_messages_must_run_once_and_in_order() {
    use super::queue_checks::{sent_once_in_order, Sent};
    let sent = [
        Sent::first(0),
        Sent::queued(0, 'a'),
        Sent::steering(0),
        Sent::queued(0, 'b'),
        Sent::first(1),
    ];
    let check = |texts: &[&str]| {
        let mut problems = Vec::new();
        sent_once_in_order("s", &said(texts), &sent, &mut problems);
        problems
    };
    let good = [
        "Go on, cycle 0.",
        "Also 0-s.",
        "Then 0-a.",
        "Then 0-b.",
        "Go on, cycle 1.",
    ];
    assert_eq!(check(&good), Vec::<String>::new());
    let twice = [&good[..], &["Then 0-a."]].concat();
    assert_eq!(check(&twice).len(), 1, "a queued message ran twice");
    let lost: Vec<&str> = good.iter().copied().filter(|t| *t != "Also 0-s.").collect();
    assert_eq!(check(&lost).len(), 1, "a steering message never ran");
    let swapped = [good[0], good[1], good[3], good[2], good[4]];
    assert_eq!(check(&swapped).len(), 1, "b ran before a");
    let late = [good[0], good[1], good[2], good[4], good[3]];
    assert_eq!(check(&late).len(), 1, "b ran after the next cycle began");
    let early = [good[1], good[0], good[2], good[3], good[4]];
    assert_eq!(
        check(&early).len(),
        1,
        "the steering message ran before its cycle"
    );
}
