//! Tests of the approval helpers: payloads, edited arguments, records and summaries.
use serde_json::json;

use super::*;

fn original() -> Value {
    json!({"path": "notes.txt", "content": "hi"})
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap()
}

#[test]
fn approving_unchanged_arguments_sends_only_the_verdict() {
    let payload = approval_payload(true, "  ", &original(), &pretty(&original())).unwrap();
    assert_eq!(payload, json!({"approved": true}));
    // Reformatted or reordered but equal JSON is not an edit.
    let reordered = r#"{ "content": "hi",   "path": "notes.txt" }"#;
    assert_eq!(
        approval_payload(true, "", &original(), reordered).unwrap(),
        json!({"approved": true})
    );
}

#[test]
fn approving_changed_arguments_sends_them() {
    let edited = r#"{"path": "edited.txt", "content": "hi"}"#;
    assert_eq!(
        approval_payload(true, "", &original(), edited).unwrap(),
        json!({"approved": true, "arguments": {"path": "edited.txt", "content": "hi"}})
    );
}

#[test]
fn approving_unusable_text_says_why() {
    let broken = approval_payload(true, "", &original(), r#"{"path": "#).unwrap_err();
    assert!(broken.contains("not valid JSON"), "{broken}");
    let not_object = approval_payload(true, "", &original(), "[1, 2]").unwrap_err();
    assert!(not_object.contains("JSON object"), "{not_object}");
}

#[test]
fn rejecting_ignores_the_text_and_keeps_a_reason() {
    assert_eq!(
        approval_payload(false, " not now ", &original(), "garbage").unwrap(),
        json!({"approved": false, "reason": "not now"})
    );
    assert_eq!(
        approval_payload(false, "", &original(), "garbage").unwrap(),
        json!({"approved": false})
    );
}

#[test]
fn summaries_name_the_verdict() {
    assert_eq!(approval_summary(true, false, None), "Approved");
    assert_eq!(
        approval_summary(true, true, Some("ok")),
        "Approved with edits"
    );
    assert_eq!(
        approval_summary(false, false, Some("not now")),
        "Rejected: not now"
    );
    assert_eq!(approval_summary(false, false, Some(" ")), "Rejected");
    assert_eq!(approval_summary(false, false, None), "Rejected");
}

#[test]
fn records_read_the_custom_value() {
    let record = ApprovalRecord::from_value(&json!({
        "interruptId": "int_1", "toolCallId": "call_1", "approved": true, "edited": true,
        "arguments": {"path": "edited.txt"}
    }));
    assert_eq!(record.interrupt_id.as_deref(), Some("int_1"));
    assert_eq!(record.tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(
        record.answer(),
        Answer::approval(true, "Approved with edits")
    );
    let declined = ApprovalRecord::from_value(&json!({
        "interruptId": "int_2", "toolCallId": "call_2", "approved": false, "edited": false
    }));
    assert_eq!(declined.answer().summary, "Rejected");
    assert!(
        declined.answer().rejected,
        "shown as a rejection, not a success"
    );
    assert_eq!(
        ApprovalRecord::from_value(&json!("odd")),
        ApprovalRecord::default()
    );
}

#[test]
fn tool_results_and_payloads_summarise_too() {
    let rejected = answer_from_tool_result(r#"{"status":"rejected","reason":"not now"}"#);
    assert_eq!(rejected, Answer::approval(false, "Rejected: not now"));
    assert_eq!(rejected.outcome.as_str(), "declined");
    assert_eq!(
        answer_from_tool_result(r#"{"ok":true}"#).summary,
        "Approved"
    );
    assert_eq!(
        summarise_approval_payload(&json!({"approved": true, "arguments": {}})),
        "Approved with edits"
    );
}

#[test]
fn the_servers_no_answer_decision_reads_as_expired() {
    let record = ApprovalRecord::from_value(&json!({
        "interruptId": "int_1", "toolCallId": "call_1", "approved": false, "edited": false,
        "reason": "the person did not answer before the deadline"
    }));
    assert!(record.is_expiry());
    assert_eq!(record.answer(), Answer::expired_approval());
    assert_eq!(record.answer().summary, "Expired — the call did not run");
    // A person's own rejection is not an expiry, whatever it says.
    let person = ApprovalRecord::from_value(&json!({
        "interruptId": "int_2", "approved": false, "reason": "too late for this"
    }));
    assert!(!person.is_expiry());
    assert_eq!(
        person.answer(),
        Answer::approval(false, "Rejected: too late for this")
    );
}

#[test]
fn an_expired_result_settles_an_approval_as_expired() {
    let content = r#"{"status":"expired","error":"the person did not answer before the deadline; the call did not run"}"#;
    assert_eq!(answer_from_tool_result(content), Answer::expired_approval());
}
