//! What a tool-approval card needs, computed without the DOM.
//!
//! It owns building the answer payload of an approval (with edited arguments only when the
//! person really changed them), reading the server's `CUSTOM tandem.tool_approval` record
//! into an [`ApprovalRecord`], and the one-line summaries the answered card shows. It must
//! not touch signals or the browser, so it is tested on the host with plain `cargo test`.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::answer::{is_expired_result, Answer, NO_ANSWER_REASON};

/// The `name` of the `CUSTOM` event the server appends when an approval is answered.
pub const TOOL_APPROVAL_EVENT: &str = shared::custom::TOOL_APPROVAL;

/// The payload of an approval answer, or a message saying why the edited arguments are not
/// usable. Approving sends `arguments` only when `edited_text` parses to a JSON object that
/// differs from `original`; rejecting ignores the text. An empty reason is left out.
pub fn approval_payload(
    approved: bool,
    reason: &str,
    original: &Value,
    edited_text: &str,
) -> Result<Value, String> {
    let mut payload = Map::new();
    payload.insert("approved".into(), Value::Bool(approved));
    if approved {
        if let Some(arguments) = edited_arguments(original, edited_text)? {
            payload.insert("arguments".into(), arguments);
        }
    }
    let reason = reason.trim();
    if !reason.is_empty() {
        payload.insert("reason".into(), Value::String(reason.to_string()));
    }
    Ok(Value::Object(payload))
}

/// The edited arguments when they differ from the original, `None` when unchanged.
fn edited_arguments(original: &Value, edited_text: &str) -> Result<Option<Value>, String> {
    let edited: Value = serde_json::from_str(edited_text)
        .map_err(|error| format!("The arguments are not valid JSON: {error}"))?;
    if &edited == original {
        return Ok(None);
    }
    if !edited.is_object() {
        return Err("The arguments must be a JSON object ({ … }).".to_string());
    }
    Ok(Some(edited))
}

/// The one-line record of an approval: `Approved`, `Approved with edits`, `Rejected` or
/// `Rejected: <reason>`.
pub fn approval_summary(approved: bool, edited: bool, reason: Option<&str>) -> String {
    let reason = reason.map(str::trim).filter(|reason| !reason.is_empty());
    match (approved, edited, reason) {
        (true, true, _) => "Approved with edits".to_string(),
        (true, false, _) => "Approved".to_string(),
        (false, _, Some(reason)) => format!("Rejected: {reason}"),
        (false, _, None) => "Rejected".to_string(),
    }
}

/// The value of a `CUSTOM tandem.tool_approval` event: which approval was answered and how.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ApprovalRecord {
    /// The interrupt that was answered.
    pub interrupt_id: Option<String>,
    /// The tool call the approval was for.
    pub tool_call_id: Option<String>,
    /// Whether the call may run (false also for a declined approval).
    pub approved: bool,
    /// Whether the person changed the arguments.
    pub edited: bool,
    /// The person's reason, when given.
    pub reason: Option<String>,
}

impl ApprovalRecord {
    /// Reads the event's value; an unreadable one names nothing, so it matches no card.
    pub fn from_value(value: &Value) -> Self {
        Self::deserialize(value).unwrap_or_default()
    }

    /// Whether this is the server's decision for an approval nobody answered in time. The
    /// `{"status":"expired"}` result that follows is the sure sign (the transcript settles
    /// the card from it); this early one, read from the reason, only spares the card a
    /// moment as `Rejected: <the server's reason>`.
    pub fn is_expiry(&self) -> bool {
        !self.approved && self.reason.as_deref().map(str::trim) == Some(NO_ANSWER_REASON)
    }

    /// The answer the read-only card shows.
    pub fn answer(&self) -> Answer {
        if self.is_expiry() {
            return Answer::expired_approval();
        }
        let summary = approval_summary(self.approved, self.edited, self.reason.as_deref());
        Answer::approval(self.approved, summary)
    }
}

/// The answer read from the approved (or rejected) call's own `TOOL_CALL_RESULT`, for a
/// card whose `CUSTOM` record never arrived: `{"status":"rejected","reason"?}` is a
/// rejection, `{"status":"expired",…}` an approval nobody answered in time, and any other
/// result means the tool ran, so it was approved.
pub fn answer_from_tool_result(content: &str) -> Answer {
    if is_expired_result(content) {
        return Answer::expired_approval();
    }
    let parsed: Value = serde_json::from_str(content).unwrap_or(Value::Null);
    let rejected = parsed.get("status").and_then(Value::as_str) == Some("rejected");
    let reason = parsed.get("reason").and_then(Value::as_str);
    Answer::approval(!rejected, approval_summary(!rejected, false, reason))
}

/// The payload's own summary (used when an approval's answer arrives as a payload).
pub fn summarise_approval_payload(payload: &Value) -> String {
    approval_summary(
        payload.get("approved").and_then(Value::as_bool) == Some(true),
        payload.get("arguments").is_some(),
        payload.get("reason").and_then(Value::as_str),
    )
}

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
