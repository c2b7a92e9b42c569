use serde_json::json;

use super::*;

fn ev(body: EventBody) -> Event {
    Event::at(body, 0)
}

fn started() -> Vec<Event> {
    vec![
        ev(EventBody::RunStarted {
            thread_id: "t".into(),
            run_id: "r1".into(),
            parent_run_id: None,
            input: None,
        }),
        ev(EventBody::StepStarted {
            step_name: MODEL_CALL_STEP.into(),
        }),
    ]
}

fn call(id: &str, name: &str, ended: bool) -> Vec<Event> {
    let mut events = vec![ev(EventBody::ToolCallStart {
        tool_call_id: id.into(),
        tool_call_name: name.into(),
        parent_message_id: None,
    })];
    if ended {
        events.push(ev(EventBody::ToolCallEnd {
            tool_call_id: id.into(),
        }));
    }
    events
}

fn step_finished() -> Event {
    ev(EventBody::StepFinished {
        step_name: MODEL_CALL_STEP.into(),
    })
}

fn tools() -> ToolRegistry {
    ToolRegistry::scratch()
}

fn names(repair: &Repair) -> Vec<&'static str> {
    repair.events.iter().map(EventBody::type_name).collect()
}

fn results(repair: &Repair) -> Vec<(String, serde_json::Value)> {
    repair
        .events
        .iter()
        .filter_map(|e| match e {
            EventBody::ToolCallResult {
                tool_call_id,
                content,
                ..
            } => Some((tool_call_id.clone(), serde_json::from_str(content).unwrap())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_run_cut_mid_answer_is_closed_marked_and_continued() {
    let mut log = started();
    log.push(ev(EventBody::TextMessageStart {
        message_id: "m".into(),
        role: None,
        name: None,
    }));
    log.extend(call("c1", "append_file", false));
    let repair = repair(&log, &tools());
    assert_eq!(
        names(&repair),
        [
            "TEXT_MESSAGE_END",
            "TOOL_CALL_END",
            "TOOL_CALL_RESULT",
            "STEP_FINISHED",
            "CUSTOM"
        ]
    );
    assert_eq!(repair.continue_run.as_deref(), Some("r1"));
    let EventBody::Custom { value, .. } = repair.events.last().unwrap() else {
        panic!("the marker comes last");
    };
    assert_eq!(value, &json!({"runId": "r1", "attempt": 1}));
}

#[test]
fn only_the_running_call_is_settled_and_only_if_it_may_not_run_twice() {
    let mut log = started();
    log.extend(call("c1", "append_file", true));
    log.extend(call("c2", "append_file", true));
    log.push(step_finished());
    let repair = repair(&log, &tools());
    let results = results(&repair);
    assert_eq!(results.len(), 1, "c2 never started: it stays pending");
    assert_eq!(results[0].0, "c1");
    assert_eq!(results[0].1["outcomeUnknown"], true);

    let mut log = started();
    log.extend(call("c1", "calculator", true));
    log.push(step_finished());
    let repair = super::repair(&log, &tools());
    assert!(
        results_of(&repair).is_empty(),
        "an idempotent call runs again"
    );
}

fn results_of(repair: &Repair) -> Vec<(String, serde_json::Value)> {
    results(repair)
}

#[test]
fn a_persisted_stop_finishes_the_run_as_cancelled() {
    let mut log = started();
    log.push(ev(EventBody::Custom {
        name: STOP_EVENT.into(),
        value: json!({"runId": "r1"}),
    }));
    let repair = repair(&log, &tools());
    assert_eq!(repair.continue_run, None);
    assert!(matches!(
        repair.events.last(),
        Some(EventBody::RunFinished {
            outcome: Some(Outcome::Cancelled),
            ..
        })
    ));
}

#[test]
fn a_run_that_keeps_crashing_fails_cleanly() {
    let mut log = started();
    for attempt in 1..=MAX_RECOVERIES {
        log.push(ev(EventBody::Custom {
            name: RECOVERED_EVENT.into(),
            value: json!({"runId": "r1", "attempt": attempt}),
        }));
    }
    let repair = repair(&log, &tools());
    assert_eq!(repair.continue_run, None);
    assert!(matches!(
        repair.events.last(),
        Some(EventBody::RunError { code: Some(code), .. }) if code == "recovery_limit"
    ));
}

#[test]
fn a_run_that_was_only_queued_takes_its_place_again_without_a_marker() {
    let mut events = started();
    events.truncate(1);
    events.push(ev(EventBody::Custom {
        name: shared::custom::RUN_QUEUED.into(),
        value: json!({"runId": "r1", "position": 3}),
    }));
    let repair = repair(&events, &tools());
    assert!(repair.events.is_empty(), "{:?}", names(&repair));
    assert_eq!(repair.continue_run.as_deref(), Some("r1"));
}
