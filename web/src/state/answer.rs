//! What a settled interrupt's read-only card says: answered, declined, rejected, or expired.
//!
//! It owns the [`Answer`] record, reading a `request_input` call's result into one (a
//! form's answer in the schema's titles and readable values: `Send me the newsletter:
//! Yes`, not `newsletter: true`; a rejected confirm as a rejection, not a success), and
//! recognising an interrupt the server expired at its deadline — by the result's
//! `{"status":"expired"}` (the robust sign: the status is a wire value) or, for an approval
//! whose decision arrives first, by the decision's reason. It must not touch signals or the
//! browser, so it is tested on the host with plain `cargo test`.

use serde_json::Value;

use super::approval::summarise_approval_payload;
use super::interrupt::{display_value, Control, FormField};

/// The `status` of the result the server gives an interrupt nobody answered in time.
pub const EXPIRED: &str = "expired";

/// The `status` a share link that hides tool arguments gives every result in place of
/// what it said (the server's `visibility::results`).
pub const HIDDEN: &str = "hidden";

/// Whether a tool result's content is one a share link hid (`{"status":"hidden"}`).
pub fn is_hidden_result(content: &str) -> bool {
    result_status(content).as_deref() == Some(HIDDEN)
}

/// The reason the server gives an approval nobody answered in time (its `CUSTOM`
/// decision arrives before the expired result).
pub const NO_ANSWER_REASON: &str = "the person did not answer before the deadline";

/// What an expired question's card says.
pub const QUESTION_EXPIRED: &str = "Expired — the agent went on without your answer";

/// What an expired approval's card says.
pub const APPROVAL_EXPIRED: &str = "Expired — the call did not run";

/// A recorded answer, as the read-only card shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// How the interrupt was settled.
    pub outcome: AnswerOutcome,
    /// A one-line summary, e.g. `Lisbon`, `Approved: fine`, `Name: Ada, Age: 36`.
    pub summary: String,
    /// The person said no: rejected a confirm or a tool call (shown as a warning, not
    /// as a success).
    pub rejected: bool,
    /// The summary is a verdict (`Approved`, `Rejected: …`) that reads on its own, not
    /// what the person typed or picked (which the card introduces with "Answered:").
    pub verdict: bool,
}

/// How an interrupt was settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerOutcome {
    /// Answered (a question) or approved (a tool call).
    Resolved,
    /// Declined (a question) or rejected (a tool call).
    Declined,
    /// Nobody answered before the deadline; the agent went on without an answer.
    Expired,
}

impl AnswerOutcome {
    /// The spelling used in the card's `data-outcome`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Resolved => "resolved",
            Self::Declined => "declined",
            Self::Expired => "expired",
        }
    }
}

impl Answer {
    /// An answer that resolved the interrupt (for an approval: approved it).
    pub fn resolved(summary: impl Into<String>) -> Self {
        Self {
            outcome: AnswerOutcome::Resolved,
            summary: summary.into(),
            rejected: false,
            verdict: false,
        }
    }

    /// An answer that declined the interrupt: skipped a question.
    pub fn declined(summary: impl Into<String>) -> Self {
        Self {
            outcome: AnswerOutcome::Declined,
            summary: summary.into(),
            rejected: false,
            verdict: true,
        }
    }

    /// A verdict on a tool call: approved, or (declining the approval) rejected.
    pub fn approval(approved: bool, summary: impl Into<String>) -> Self {
        let outcome = match approved {
            true => AnswerOutcome::Resolved,
            false => AnswerOutcome::Declined,
        };
        Self {
            outcome,
            summary: summary.into(),
            rejected: !approved,
            verdict: true,
        }
    }

    /// A confirm answered: approved or rejected, either way the question was answered.
    pub fn confirm(approved: bool, summary: impl Into<String>) -> Self {
        Self {
            rejected: !approved,
            verdict: true,
            ..Self::resolved(summary)
        }
    }

    /// The record of an interrupt with this control that nobody answered in time.
    pub fn expired(control: &Control) -> Self {
        match control {
            Control::ToolApproval { .. } => Self::expired_approval(),
            _ => Self::expired_question(),
        }
    }

    /// The record of a question nobody answered in time.
    pub fn expired_question() -> Self {
        Self {
            outcome: AnswerOutcome::Expired,
            ..Self::declined(QUESTION_EXPIRED)
        }
    }

    /// The record of a tool approval nobody answered in time.
    pub fn expired_approval() -> Self {
        Self {
            outcome: AnswerOutcome::Expired,
            ..Self::declined(APPROVAL_EXPIRED)
        }
    }

    /// Whether the person resolved (or approved) it.
    pub fn is_resolved(&self) -> bool {
        self.outcome == AnswerOutcome::Resolved
    }

    /// Whether nobody answered it in time.
    pub fn is_expired(&self) -> bool {
        self.outcome == AnswerOutcome::Expired
    }
}

/// The `status` of a tool result's JSON content, if it has one.
fn result_status(content: &str) -> Option<String> {
    let parsed: Value = serde_json::from_str(content).ok()?;
    Some(parsed.get("status")?.as_str()?.to_string())
}

/// Whether a tool result is the server's "nobody answered in time" result.
pub fn is_expired_result(content: &str) -> bool {
    result_status(content).as_deref() == Some(EXPIRED)
}

/// Reads the `TOOL_CALL_RESULT` content of a `request_input` call
/// (`{"status":"resolved","payload":{…}}`, `{"status":"cancelled"}` or
/// `{"status":"expired","error":…}`) into an [`Answer`].
pub fn answer_from_result(control: &Control, content: &str) -> Answer {
    let parsed: Value = serde_json::from_str(content).unwrap_or(Value::Null);
    match parsed.get("status").and_then(Value::as_str).unwrap_or("") {
        "resolved" => {
            let payload = parsed.get("payload").unwrap_or(&Value::Null);
            answer_from_payload(control, payload)
        }
        EXPIRED => Answer::expired(control),
        // A share link that hides tool arguments shows that the question was answered, not
        // what the answer was.
        HIDDEN => Answer {
            verdict: true,
            ..Answer::resolved("Answered (this link does not show the answer)")
        },
        "" | "cancelled" => Answer::declined("Declined"),
        other => Answer::declined(capitalised(other)),
    }
}

fn answer_from_payload(control: &Control, payload: &Value) -> Answer {
    let field = |name: &str| payload.get(name).map(display_value).unwrap_or_default();
    match control {
        Control::Text => Answer::resolved(field("text")),
        Control::Choice(_) => Answer::resolved(field("choice")),
        Control::Confirm => {
            let approved = payload.get("approved").and_then(Value::as_bool) == Some(true);
            let verdict = if approved { "Approved" } else { "Rejected" };
            let summary = match payload.get("comment").and_then(Value::as_str) {
                Some(comment) if !comment.is_empty() => format!("{verdict}: {comment}"),
                _ => verdict.to_string(),
            };
            Answer::confirm(approved, summary)
        }
        Control::Form(fields) => Answer::resolved(summarise_form(fields, payload)),
        Control::ToolApproval { .. } => {
            let approved = payload.get("approved").and_then(Value::as_bool) == Some(true);
            Answer::approval(approved, summarise_approval_payload(payload))
        }
        Control::Budget { .. } => budget_decision(payload),
    }
}

/// What a budget card says once the person decided (`CUSTOM tandem.budget_decision`'s
/// value: `{continue, pastBudget}`).
pub fn budget_decision(decision: &Value) -> Answer {
    let flag = |key: &str| decision.get(key).and_then(Value::as_bool) == Some(true);
    match (flag("continue"), flag("pastBudget")) {
        (true, true) => Answer::approval(true, "Continued past the budget"),
        (true, false) => Answer::approval(true, "Continued"),
        _ => Answer::declined("Stopped at the budget"),
    }
}

/// A form's answer as a person reads it: each value under its field's title, in the
/// schema's order (then any value the schema did not name, under its key), with booleans
/// as Yes / No and strings without quotes.
pub fn summarise_form(fields: &[FormField], payload: &Value) -> String {
    let Some(object) = payload.as_object() else {
        return display_value(payload);
    };
    let titled = fields.iter().filter_map(|field| {
        let value = object.get(&field.name)?;
        Some(format!("{}: {}", field.label, readable(value)))
    });
    let untitled = object
        .iter()
        .filter(|(name, _)| !fields.iter().any(|field| &field.name == *name))
        .map(|(name, value)| format!("{name}: {}", readable(value)));
    titled.chain(untitled).collect::<Vec<_>>().join(", ")
}

/// One answered value as a person reads it.
fn readable(value: &Value) -> String {
    match value {
        Value::Bool(true) => "Yes".to_string(),
        Value::Bool(false) => "No".to_string(),
        other => display_value(other),
    }
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The content the server writes for an unanswered question.
    const EXPIRED_QUESTION: &str =
        r#"{"status":"expired","error":"the person did not answer before the deadline"}"#;

    #[test]
    fn answers_are_summarised_by_kind() {
        let choice = Control::Choice(vec![]);
        let text = r#"{"status":"resolved","payload":{"choice":"Lisbon"}}"#;
        assert_eq!(
            answer_from_result(&choice, text),
            Answer::resolved("Lisbon")
        );
        let confirm = r#"{"status":"resolved","payload":{"approved":true,"comment":"ok"}}"#;
        assert_eq!(
            answer_from_result(&Control::Confirm, confirm).summary,
            "Approved: ok"
        );
        let form = r#"{"status":"resolved","payload":{"name":"Ada","age":36}}"#;
        assert_eq!(
            answer_from_result(&Control::Form(vec![]), form).summary,
            "name: Ada, age: 36"
        );
        let declined = answer_from_result(&Control::Text, r#"{"status":"cancelled"}"#);
        assert_eq!(declined, Answer::declined("Declined"));
        assert!(!declined.is_resolved() && !declined.rejected);
    }

    #[test]
    fn a_rejected_confirm_is_a_rejection_not_a_success() {
        let no = r#"{"status":"resolved","payload":{"approved":false,"comment":"not yet"}}"#;
        let answer = answer_from_result(&Control::Confirm, no);
        assert_eq!(answer.summary, "Rejected: not yet");
        assert!(answer.rejected && answer.verdict && answer.is_resolved());
        let yes = answer_from_result(
            &Control::Confirm,
            r#"{"status":"resolved","payload":{"approved":true}}"#,
        );
        assert_eq!(yes.summary, "Approved");
        assert!(!yes.rejected && yes.verdict);
        let text = answer_from_result(
            &Control::Text,
            r#"{"status":"resolved","payload":{"text":"Rejected"}}"#,
        );
        assert!(!text.rejected && !text.verdict, "only a verdict is one");
    }

    #[test]
    fn a_form_answer_uses_the_schemas_titles_and_readable_values() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "name": {"type": "string", "title": "Name"},
            "plan": {"type": "string", "title": "Plan", "enum": ["Free", "Pro"]},
            "seats": {"type": "integer"},
            "newsletter": {"type": "boolean", "title": "Send me the newsletter"},
            "terms": {"type": "boolean", "title": "I accept the terms"}
        }});
        let control = Control::Form(crate::state::interrupt::form_fields(&schema));
        let content = r#"{"status":"resolved","payload":{"newsletter":true,"name":"Ada",
            "plan":"Pro","seats":3,"terms":false,"extra":[1]}}"#;
        assert_eq!(
            answer_from_result(&control, content).summary,
            "Name: Ada, Plan: Pro, seats: 3, Send me the newsletter: Yes, \
             I accept the terms: No, extra: [1]"
        );
    }

    #[test]
    fn an_expired_result_is_an_expired_answer() {
        let answer = answer_from_result(&Control::Text, EXPIRED_QUESTION);
        assert_eq!(answer.outcome, AnswerOutcome::Expired);
        assert_eq!(
            answer.summary,
            "Expired — the agent went on without your answer"
        );
        assert!(answer.is_expired() && !answer.is_resolved());
        let choice = answer_from_result(&Control::Choice(vec!["a".into()]), EXPIRED_QUESTION);
        assert_eq!(choice.summary, QUESTION_EXPIRED);
    }

    #[test]
    fn an_expired_approval_says_the_call_did_not_run() {
        let control = Control::ToolApproval {
            tool_name: "write_file".into(),
            arguments: Value::Null,
        };
        let answer = Answer::expired(&control);
        assert_eq!(answer.summary, "Expired — the call did not run");
        assert_eq!(answer.outcome.as_str(), "expired");
    }

    #[test]
    fn a_result_a_link_hid_reads_as_answered_without_what_was_answered() {
        let hidden = r#"{"status":"hidden"}"#;
        let answer = answer_from_result(&Control::Text, hidden);
        assert_eq!(answer.outcome, AnswerOutcome::Resolved);
        assert_eq!(
            answer.summary,
            "Answered (this link does not show the answer)"
        );
        assert!(answer.verdict);
        assert!(is_hidden_result(hidden));
        assert!(is_hidden_result(
            r#"{"status":"hidden","error":"hidden by the share link"}"#
        ));
        assert!(!is_hidden_result(r#"{"status":"resolved"}"#));
    }

    #[test]
    fn only_the_expired_status_counts_as_expired() {
        assert!(is_expired_result(EXPIRED_QUESTION));
        assert!(is_expired_result(
            r#"{"status":"expired","error":"…; the call did not run"}"#
        ));
        assert!(!is_expired_result(r#"{"status":"rejected"}"#));
        assert!(!is_expired_result(r#"{"error":"expired"}"#));
        assert!(!is_expired_result("expired"));
        assert!(!is_expired_result(r#"{"status":42}"#));
    }

    #[test]
    fn outcomes_have_stable_spellings() {
        assert_eq!(AnswerOutcome::Resolved.as_str(), "resolved");
        assert_eq!(AnswerOutcome::Declined.as_str(), "declined");
        assert_eq!(AnswerOutcome::Expired.as_str(), "expired");
    }
}
