//! Tests of tool approvals in the transcript fold: the card, its `CUSTOM` record, and the
//! approved call's own result staying on its tool card.

use serde_json::{json, Value};
use shared::Event;

use super::*;
use crate::state::answer::Answer;
use crate::state::interrupt::Control;
use crate::state::item::{InterruptCard, ToolCall, ToolStatus};

const ARGS: &str = r#"{"path":"notes/tandem.txt","content":"the demo works"}"#;

fn approval_interrupt() -> Value {
    finished(json!({"type": "interrupt", "interrupts": [{
        "id": "int_1", "reason": "tool_approval", "message": "Allow `write_file`?",
        "toolCallId": "w1",
        "metadata": {"kind": "tool_approval", "toolName": "write_file",
                     "arguments": serde_json::from_str::<Value>(ARGS).unwrap()}}]}))
}

fn record(fields: Value) -> Value {
    let mut value = json!({"interruptId": "int_1", "toolCallId": "w1"});
    value
        .as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    json!({"type": "CUSTOM", "name": "tandem.tool_approval", "value": value})
}

/// A write the agent asks to make; with an answer, the resumed run's record and result.
fn save_note(answer: Option<(Value, &str)>) -> Vec<Value> {
    let mut events = vec![started()];
    events.extend(message("u1", "user", &["save a note"]));
    events.extend(tool_call("w1", "write_file", &[ARGS]));
    events.push(approval_interrupt());
    if let Some((fields, content)) = answer {
        events.push(started());
        events.push(record(fields));
        events.push(result("w1", content));
    }
    events
}

fn card(transcript: &Transcript) -> &InterruptCard {
    transcript
        .items()
        .iter()
        .find_map(|item| match &item.body {
            ItemBody::Interrupt(card) => Some(&**card),
            _ => None,
        })
        .expect("an approval card")
}

fn tool(transcript: &Transcript) -> &ToolCall {
    transcript
        .items()
        .iter()
        .find_map(|item| match &item.body {
            ItemBody::ToolCall(call) => Some(call),
            _ => None,
        })
        .expect("a tool card")
}

fn summary(transcript: &Transcript) -> Option<&str> {
    card(transcript).answer.as_ref().map(|a| a.summary.as_str())
}

#[test]
fn an_approval_waits_beside_a_tool_card_that_says_it_waits_for_it() {
    let transcript = fold(&save_note(None));
    assert_eq!(transcript.run_state(), RunState::Awaiting);
    assert_eq!(card(&transcript).control.kind_name(), "tool_approval");
    assert_eq!(card(&transcript).answer, None);
    assert_eq!(tool(&transcript).name, "write_file");
    assert_eq!(tool(&transcript).status(), ToolStatus::Awaiting);
    assert_eq!(
        tool(&transcript).status().label(),
        "waiting for your approval"
    );
}

#[test]
fn once_approved_the_tool_card_runs_until_its_result() {
    let events = save_note(Some((json!({"approved": true, "edited": false}), "{}")));
    let transcript = fold(&events[..events.len() - 1]);
    assert_eq!(tool(&transcript).status(), ToolStatus::Running);
    assert_eq!(fold(&events).items().len(), transcript.items().len());
    assert_eq!(tool(&fold(&events)).status(), ToolStatus::Done);
}

#[test]
fn approving_answers_the_card_and_the_result_goes_to_the_tool_card() {
    let ok = r#"{"ok":true}"#;
    let mut transcript = fold(&save_note(Some((
        json!({"approved": true, "edited": false}),
        ok,
    ))));
    assert_eq!(
        card(&transcript).answer,
        Some(Answer::approval(true, "Approved"))
    );
    assert_eq!(tool(&transcript).result.as_deref(), Some(ok));
    assert_eq!(tool(&transcript).status(), ToolStatus::Done);
    assert_eq!(transcript.run_state(), RunState::Running);
    let end: Event = serde_json::from_value(finished(json!({"type": "success"}))).unwrap();
    transcript.apply(99, &end);
    assert_eq!(transcript.run_state(), RunState::Idle);
}

#[test]
fn approving_with_edits_says_so() {
    let edited = json!({"approved": true, "edited": true,
                        "arguments": {"path": "notes/edited.txt", "content": "x"}});
    let transcript = fold(&save_note(Some((edited, r#"{"ok":true}"#))));
    assert_eq!(summary(&transcript), Some("Approved with edits"));
}

#[test]
fn rejecting_keeps_the_reason_and_the_rejection_result_stays_on_the_tool_card() {
    let rejected = r#"{"status":"rejected","reason":"not now"}"#;
    let events = save_note(Some((
        json!({"approved": false, "edited": false, "reason": "not now"}),
        rejected,
    )));
    let mut transcript = fold(&events[..events.len() - 1]);
    assert_eq!(summary(&transcript), Some("Rejected: not now"));
    let last: Event = serde_json::from_value(events.last().unwrap().clone()).unwrap();
    let touched = transcript.apply(events.len() as u64, &last);
    let tool_at = transcript
        .items()
        .iter()
        .position(|i| i.key == "tool:w1")
        .unwrap();
    assert_eq!(
        touched,
        vec![tool_at],
        "the result touches only the tool card"
    );
    assert_eq!(summary(&transcript), Some("Rejected: not now"));
    assert_eq!(tool(&transcript).result.as_deref(), Some(rejected));
    assert_eq!(tool(&transcript).status(), ToolStatus::Rejected);
}

#[test]
fn a_declined_approval_is_rejected_and_a_record_can_name_only_the_call() {
    let declined = json!({"type": "CUSTOM", "name": "tandem.tool_approval",
                          "value": {"toolCallId": "w1", "approved": false, "edited": false}});
    let mut events = save_note(None);
    events.extend([started(), declined]);
    let transcript = fold(&events);
    assert_eq!(summary(&transcript), Some("Rejected"));
    assert_eq!(transcript.run_state(), RunState::Running);
}

#[test]
fn replaying_the_same_events_changes_nothing() {
    let events = save_note(Some((
        json!({"approved": true, "edited": false}),
        r#"{"ok":true}"#,
    )));
    let mut transcript = fold(&events);
    let before = transcript.items().to_vec();
    for (n, event) in events.iter().enumerate() {
        let event: Event = serde_json::from_value(event.clone()).unwrap();
        assert!(transcript.apply(n as u64 + 1, &event).is_empty());
    }
    assert_eq!(transcript.items(), &before[..]);
    assert_eq!(
        fold(&events).items(),
        &before[..],
        "a reload folds to the same items"
    );
}

#[test]
fn an_approved_call_without_a_result_is_abandoned_when_its_run_fails() {
    let mut events = save_note(None);
    events.extend([
        started(),
        record(json!({"approved": true, "edited": false})),
        json!({"type": "RUN_ERROR", "message": "disk full"}),
    ]);
    let transcript = fold(&events);
    assert_eq!(summary(&transcript), Some("Approved"));
    assert_eq!(tool(&transcript).status(), ToolStatus::Error);
}

#[test]
fn other_custom_events_and_unknown_approvals_are_ignored() {
    let mut events = save_note(None);
    events.push(
        json!({"type": "CUSTOM", "name": "something.else", "value": {"interruptId": "int_1"}}),
    );
    events.push(json!({"type": "CUSTOM", "name": "tandem.tool_approval",
                       "value": {"interruptId": "int_9", "toolCallId": "w9", "approved": true}}));
    let transcript = fold(&events);
    assert_eq!(card(&transcript).answer, None);
    assert_eq!(transcript.run_state(), RunState::Awaiting);
}

#[test]
fn a_result_without_a_record_still_settles_the_approval() {
    let mut events = save_note(None);
    events.extend([
        started(),
        result("w1", r#"{"status":"rejected","reason":"late"}"#),
    ]);
    let transcript = fold(&events);
    assert_eq!(summary(&transcript), Some("Rejected: late"));
    assert!(tool(&transcript).result.is_some());
    assert_eq!(transcript.run_state(), RunState::Running);
}

/// The tool result the server writes for an approval nobody answered in time.
const EXPIRED: &str = r#"{"status":"expired","error":"the person did not answer before the deadline; the call did not run"}"#;

#[test]
fn an_expired_approval_reads_as_expired_and_its_call_as_failed() {
    let decision = json!({"approved": false, "edited": false,
                          "reason": "the person did not answer before the deadline"});
    let events = save_note(Some((decision, EXPIRED)));
    // The decision alone already reads as an expiry…
    let transcript = fold(&events[..events.len() - 1]);
    assert_eq!(summary(&transcript), Some("Expired — the call did not run"));
    // …and the result that follows keeps it so.
    let transcript = fold(&events);
    let answer = card(&transcript).answer.clone().expect("settled");
    assert_eq!(answer, Answer::expired_approval());
    assert_eq!(answer.outcome.as_str(), "expired");
    assert_eq!(tool(&transcript).status(), ToolStatus::Error);
}

#[test]
fn the_expired_result_settles_the_approval_whatever_the_decision_said() {
    // Were the server's wording to change, the result's status still tells.
    let decision = json!({"approved": false, "edited": false, "reason": "out of time"});
    let events = save_note(Some((decision, EXPIRED)));
    let mut transcript = fold(&events[..events.len() - 1]);
    assert_eq!(summary(&transcript), Some("Rejected: out of time"));
    let last: Event = serde_json::from_value(events.last().unwrap().clone()).unwrap();
    let touched = transcript.apply(events.len() as u64, &last);
    let at = |key: &str| {
        transcript
            .items()
            .iter()
            .position(|i| i.key == key)
            .unwrap()
    };
    assert_eq!(touched, vec![at("interrupt:int_1"), at("tool:w1")]);
    assert_eq!(summary(&transcript), Some("Expired — the call did not run"));
}

#[test]
fn an_expired_result_without_a_decision_settles_the_approval_too() {
    let mut events = save_note(None);
    events.extend([started(), result("w1", EXPIRED)]);
    let transcript = fold(&events);
    assert_eq!(card(&transcript).answer, Some(Answer::expired_approval()));
    assert_eq!(tool(&transcript).status(), ToolStatus::Error);
}

#[test]
fn a_run_paused_at_its_budget_shows_what_was_spent_and_then_the_decision() {
    let paused = finished(json!({"type": "interrupt", "interrupts": [{
        "id": "int_b", "reason": "budget", "message": "Your budget is used up.",
        "metadata": {"kind": "budget", "mayOverrun": true, "budget": [
            {"period": "day", "unit": "usd", "limit": 5.0, "spent": 5.02, "left": 0.0,
             "resetsAt": "2026-11-27T00:00:00Z"},
            {"period": "month", "unit": "tokens", "limit": 1000.0, "spent": 1200.0}]}}]}));
    let mut events = vec![started()];
    events.extend(message("u1", "user", &["count"]));
    events.push(paused);
    let transcript = fold(&events);
    assert_eq!(transcript.run_state(), RunState::Awaiting);
    assert_eq!(
        card(&transcript).control,
        Control::Budget { may_overrun: true }
    );
    for (decision, said) in [
        (
            json!({"continue": true, "pastBudget": true}),
            "Continued past the budget",
        ),
        (json!({"continue": true, "pastBudget": false}), "Continued"),
        (
            json!({"continue": false, "pastBudget": false}),
            "Stopped at the budget",
        ),
    ] {
        let mut decided = events.clone();
        decided.push(started());
        let mut value = json!({"interruptId": "int_b"});
        value
            .as_object_mut()
            .unwrap()
            .extend(decision.as_object().unwrap().clone());
        decided.push(json!({"type": "CUSTOM", "name": "tandem.budget_decision", "value": value}));
        assert_eq!(summary(&fold(&decided)), Some(said));
    }
}
