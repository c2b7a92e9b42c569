//! The tool approval gate: the interrupt a call that needs approval becomes, the checks a
//! person's decision must pass, and how that decision is recorded.
//!
//! A decision is recorded as `CUSTOM tandem.tool_approval` in the transaction that resumes
//! the run (a rejection also gets its tool result there). The run loop reads approvals
//! back from the log; this module runs no tool and pauses nothing itself.

use serde_json::{json, Value};
use shared::{EventBody, Interrupt, ResumeStatus};

use crate::agent::conversation::ToolCallRecord;
use crate::agent::tools::ToolRegistry;
use crate::domain::{new_id, rfc3339_after};

/// The interrupt reason of a call waiting for approval.
pub const REASON: &str = "tool_approval";
/// The `CUSTOM` event name a decision is recorded under.
pub const APPROVAL_EVENT: &str = shared::custom::TOOL_APPROVAL;
/// Longest rejection reason accepted, in characters.
const MAX_REASON: usize = 2000;

/// A person's decision on one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    pub interrupt_id: String,
    pub tool_call_id: String,
    pub approved: bool,
    /// Why it was rejected, if the person said.
    pub reason: Option<String>,
    /// Arguments the person edited before approving.
    pub arguments: Option<Value>,
}

impl Approval {
    /// Reads a recorded decision; `None` if the value is not one.
    pub fn from_event(value: &Value) -> Option<Self> {
        Some(Self {
            interrupt_id: value.get("interruptId")?.as_str()?.into(),
            tool_call_id: value.get("toolCallId")?.as_str()?.into(),
            approved: value.get("approved")?.as_bool()?,
            reason: value.get("reason").and_then(Value::as_str).map(Into::into),
            arguments: value.get("arguments").cloned(),
        })
    }

    /// The event that records the decision.
    pub fn to_event(&self) -> EventBody {
        let mut value = json!({
            "interruptId": self.interrupt_id,
            "toolCallId": self.tool_call_id,
            "approved": self.approved,
            "edited": self.arguments.is_some(),
        });
        if let Some(reason) = &self.reason {
            value["reason"] = json!(reason);
        }
        if let Some(arguments) = &self.arguments {
            value["arguments"] = arguments.clone();
        }
        EventBody::Custom {
            name: APPROVAL_EVENT.into(),
            value,
        }
    }

    /// The tool result a rejection gives the model.
    pub fn rejection_content(&self) -> String {
        let mut content = json!({
            "status": "rejected",
            "error": "the person rejected this call; it did not run",
        });
        if let Some(reason) = &self.reason {
            content["reason"] = json!(reason);
        }
        content.to_string()
    }
}

/// What an approval answer's payload must look like.
pub fn response_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "approved": {"type": "boolean"},
            "reason": {"type": "string", "maxLength": MAX_REASON},
            "arguments": {"type": "object"}
        },
        "required": ["approved"],
        "additionalProperties": false
    })
}

/// The interrupt a call that needs approval becomes; `arguments` are already checked and
/// `timeout` (seconds) sets its deadline.
pub fn interrupt(
    call: &ToolCallRecord,
    arguments: &Value,
    tools: &ToolRegistry,
    timeout: Option<u64>,
) -> Interrupt {
    let schema = tools
        .spec(&call.name)
        .map(|spec| spec.parameters)
        .unwrap_or_else(|| json!({}));
    Interrupt {
        id: new_id("int"),
        reason: REASON.into(),
        message: Some(format!("Allow `{}` to run?", call.name)),
        tool_call_id: Some(call.id.clone()),
        response_schema: Some(response_schema()),
        expires_at: timeout.map(rfc3339_after),
        metadata: Some(json!({
            "kind": REASON,
            "toolName": call.name,
            "arguments": arguments,
            "argumentsSchema": schema,
        })),
    }
}

/// Turns an answer into a decision. A declined answer is a rejection; edited arguments
/// must pass the tool's schema.
pub fn decide(
    interrupt: &Interrupt,
    status: ResumeStatus,
    payload: Option<&Value>,
    tools: &ToolRegistry,
) -> Result<Approval, String> {
    let mut approval = Approval {
        interrupt_id: interrupt.id.clone(),
        tool_call_id: interrupt.tool_call_id.clone().unwrap_or_default(),
        approved: false,
        reason: None,
        arguments: None,
    };
    if status == ResumeStatus::Cancelled {
        return Ok(approval);
    }
    let payload = payload.ok_or("a resolved answer needs a `payload`")?;
    approval.approved = payload["approved"].as_bool().unwrap_or(false);
    approval.reason = payload
        .get("reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|reason| !reason.is_empty())
        .map(Into::into);
    let original = interrupt.metadata.as_ref().and_then(|m| m.get("arguments"));
    let edited = payload
        .get("arguments")
        .filter(|edit| Some(*edit) != original);
    if let (true, Some(arguments)) = (approval.approved, edited) {
        let tool = interrupt
            .metadata
            .as_ref()
            .and_then(|m| m["toolName"].as_str())
            .unwrap_or_default();
        tools.validate(tool, arguments)?;
        approval.arguments = Some(arguments.clone());
    }
    Ok(approval)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(tools: &ToolRegistry) -> Interrupt {
        let call = ToolCallRecord {
            id: "call_1".into(),
            name: "write_file".into(),
            arguments: r#"{"path":"a.txt","content":"x"}"#.into(),
        };
        let arguments = tools.check(&call.name, &call.arguments).unwrap();
        interrupt(&call, &arguments, tools, None)
    }

    #[test]
    fn edits_are_checked_against_the_tool_schema() {
        let tools = ToolRegistry::scratch();
        let interrupt = pending(&tools);
        let bad = json!({"approved": true, "arguments": {"path": 3}});
        assert!(decide(&interrupt, ResumeStatus::Resolved, Some(&bad), &tools).is_err());
        let good = json!({"approved": true, "arguments": {"path": "b.txt", "content": "y"}});
        let approval = decide(&interrupt, ResumeStatus::Resolved, Some(&good), &tools).unwrap();
        assert!(approval.approved);
        assert_eq!(approval.arguments.unwrap()["path"], "b.txt");
    }

    #[test]
    fn unchanged_arguments_are_not_an_edit_and_decline_is_a_rejection() {
        let tools = ToolRegistry::scratch();
        let interrupt = pending(&tools);
        let same = json!({"approved": true, "arguments": {"path": "a.txt", "content": "x"}});
        let approval = decide(&interrupt, ResumeStatus::Resolved, Some(&same), &tools).unwrap();
        assert_eq!(approval.arguments, None);
        let declined = decide(&interrupt, ResumeStatus::Cancelled, None, &tools).unwrap();
        assert!(!declined.approved);
    }

    #[test]
    fn a_decision_round_trips_through_its_event() {
        let approval = Approval {
            interrupt_id: "int_1".into(),
            tool_call_id: "call_1".into(),
            approved: false,
            reason: Some("not now".into()),
            arguments: None,
        };
        let EventBody::Custom { value, .. } = approval.to_event() else {
            panic!("a decision is a CUSTOM event");
        };
        assert_eq!(Approval::from_event(&value), Some(approval));
    }
}
