//! Client tools (AG-UI's "frontend tools"): tools an AG-UI client declares in its
//! `RunAgentInput`, offered to the model beside the server's own and run by the client.
//!
//! Once the server's own calls of a model turn have run, the turn's calls of them end the
//! run with `RUN_FINISHED` outcome success and `pendingToolCallIds`. The session then
//! waits as it waits for a question: one interrupt (reason [`REASON`]) covers every such
//! call of the turn, raised by a `CUSTOM tandem.client_tools_pending` committed with that
//! `RUN_FINISHED`, so a restart, a stop and the expiry sweeper treat it like any other
//! interrupt. Its answer carries the results (`{"results": [{toolCallId, content,
//! messageId?}]}`, what the client's `tool` messages become; every call needs exactly
//! one). Results that came as the client's `tool` messages are not recorded again as
//! `TOOL_CALL_RESULT`s: they travel in the resuming run's `RUN_STARTED.input` (the client
//! holds them already), where the conversation reads them. Results given over REST, and
//! the ones a cancelled or expired wait gives every call, are recorded as
//! `TOOL_CALL_RESULT`s. This module runs nothing and pauses nothing itself.

use serde_json::{json, Value};
use shared::{EventBody, Interrupt, ResumeStatus, ToolRole};

use crate::agent::conversation::ToolCallRecord;
use crate::agent::tools::{self, ToolSpec};
use crate::domain::{new_id, rfc3339_after};

/// The interrupt reason of calls waiting for the client's results.
pub const REASON: &str = "client_tools";
/// The `CUSTOM` event that raises the interrupt.
pub const PENDING_EVENT: &str = shared::custom::CLIENT_TOOLS_PENDING;
/// Longest message id a client may give a result.
const MAX_MESSAGE_ID: usize = 128;

/// The tools a run's input declares, from its `RUN_STARTED.input.tools`; entries that
/// are not tools are skipped (the input was checked when it was accepted).
pub fn declared(input: Option<&Value>) -> Vec<ToolSpec> {
    let tools = input
        .and_then(|input| input.get("tools"))
        .and_then(Value::as_array);
    tools
        .into_iter()
        .flatten()
        .filter_map(|tool| {
            Some(ToolSpec {
                name: tool.get("name")?.as_str()?.to_string(),
                description: tool
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                parameters: tool
                    .get("parameters")
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object"})),
            })
        })
        .collect()
}

/// The interrupt a turn's client calls become; `timeout` (seconds) sets its deadline.
pub fn interrupt(calls: &[&ToolCallRecord], timeout: Option<u64>) -> Interrupt {
    let names: Vec<&str> = calls.iter().map(|call| call.name.as_str()).collect();
    let ids: Vec<&str> = calls.iter().map(|call| call.id.as_str()).collect();
    let described: Vec<Value> = calls
        .iter()
        .map(|call| json!({"id": call.id, "name": call.name, "arguments": call.arguments}))
        .collect();
    Interrupt {
        id: new_id("int"),
        reason: REASON.into(),
        message: Some(format!(
            "Waiting for the client to run {}",
            names.join(", ")
        )),
        tool_call_id: ids.first().map(|id| id.to_string()),
        response_schema: Some(response_schema(&ids)),
        expires_at: timeout.map(rfc3339_after),
        metadata: Some(json!({"kind": REASON, "toolCalls": described})),
    }
}

/// The event that raises `interrupt`, committed with the run's `RUN_FINISHED`.
pub fn pending_event(interrupt: &Interrupt) -> EventBody {
    EventBody::Custom {
        name: PENDING_EVENT.into(),
        value: serde_json::to_value(interrupt).expect("an interrupt serialises"),
    }
}

/// The tool call ids a client-tools interrupt waits for, in the turn's order.
pub fn call_ids(interrupt: &Interrupt) -> Vec<String> {
    let calls = interrupt.metadata.as_ref().and_then(|m| m.get("toolCalls"));
    let calls = calls.and_then(Value::as_array).into_iter().flatten();
    calls
        .filter_map(|call| Some(call.get("id")?.as_str()?.to_string()))
        .collect()
}

/// The schema of an answer: a result for calls among `ids`.
fn response_schema(ids: &[&str]) -> Value {
    json!({
        "type": "object",
        "required": ["results"],
        "properties": {"results": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["toolCallId", "content"],
                "properties": {
                    "toolCallId": {"enum": ids},
                    "content": {"type": "string"},
                    "messageId": {"type": "string", "minLength": 1, "maxLength": MAX_MESSAGE_ID},
                },
            },
        }},
    })
}

/// The results an answer records: one `TOOL_CALL_RESULT` per call, in the turn's order.
/// A resolved answer must give every call exactly one result; a cancelled one gives
/// each call a result saying so. Contents longer than `max_bytes` are truncated.
pub fn results(
    interrupt: &Interrupt,
    status: ResumeStatus,
    payload: Option<&Value>,
    max_bytes: usize,
) -> Result<Vec<EventBody>, String> {
    let ids = call_ids(interrupt);
    if status == ResumeStatus::Cancelled {
        let content = json!({"status": "cancelled", "error": "the call was cancelled before the client returned a result"});
        return Ok(ids
            .iter()
            .map(|id| result(id, None, content.to_string()))
            .collect());
    }
    let given = payload
        .and_then(|payload| payload.get("results"))
        .and_then(Value::as_array)
        .ok_or("the answer needs `results`: one `{toolCallId, content}` per call")?;
    let mut events = Vec::with_capacity(ids.len());
    for id in &ids {
        let mut of_call = given
            .iter()
            .filter(|r| r["toolCallId"].as_str() == Some(id));
        let found = of_call
            .next()
            .ok_or(format!("no result for tool call {id}"))?;
        if of_call.next().is_some() {
            return Err(format!("tool call {id} has more than one result"));
        }
        let content = found["content"].as_str().unwrap_or_default().to_string();
        let message_id = found["messageId"].as_str();
        events.push(result(
            id,
            message_id,
            tools::truncate_result(content, max_bytes),
        ));
    }
    Ok(events)
}

/// The results an expiry records: each call was not answered in time.
pub fn expired(interrupt: &Interrupt, why: &str) -> Vec<EventBody> {
    let content = json!({"status": "expired", "error": why}).to_string();
    call_ids(interrupt)
        .iter()
        .map(|id| result(id, None, content.clone()))
        .collect()
}

fn result(tool_call_id: &str, message_id: Option<&str>, content: String) -> EventBody {
    EventBody::ToolCallResult {
        message_id: message_id.map_or_else(|| new_id("msg"), str::to_string),
        tool_call_id: tool_call_id.into(),
        content,
        role: Some(ToolRole::Tool),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, name: &str) -> ToolCallRecord {
        ToolCallRecord {
            id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
        }
    }

    fn contents(events: &[EventBody]) -> Vec<(String, String)> {
        events
            .iter()
            .map(|event| match event {
                EventBody::ToolCallResult {
                    tool_call_id,
                    content,
                    ..
                } => (tool_call_id.clone(), content.clone()),
                other => panic!("not a result: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn every_call_needs_exactly_one_result_in_the_turns_order() {
        let (a, b) = (call("c1", "show_card"), call("c2", "pick_date"));
        let interrupt = interrupt(&[&a, &b], None);
        assert_eq!(call_ids(&interrupt), ["c1", "c2"]);
        let both = json!({"results": [
            {"toolCallId": "c2", "content": "2026-12-01"},
            {"toolCallId": "c1", "content": "shown", "messageId": "m1"},
        ]});
        let events = results(&interrupt, ResumeStatus::Resolved, Some(&both), 100).unwrap();
        assert_eq!(
            contents(&events),
            [
                ("c1".into(), "shown".into()),
                ("c2".into(), "2026-12-01".into())
            ]
        );
        let EventBody::ToolCallResult { message_id, .. } = &events[0] else {
            unreachable!()
        };
        assert_eq!(message_id, "m1", "the client's message id is kept");

        let one = json!({"results": [{"toolCallId": "c1", "content": "shown"}]});
        let missing = results(&interrupt, ResumeStatus::Resolved, Some(&one), 100);
        assert_eq!(missing.unwrap_err(), "no result for tool call c2");
        let twice = json!({"results": [
            {"toolCallId": "c1", "content": "x"}, {"toolCallId": "c1", "content": "y"},
            {"toolCallId": "c2", "content": "z"},
        ]});
        assert!(results(&interrupt, ResumeStatus::Resolved, Some(&twice), 100).is_err());
    }

    #[test]
    fn a_cancelled_or_expired_answer_gives_every_call_a_result() {
        let (a, b) = (call("c1", "show_card"), call("c2", "pick_date"));
        let interrupt = interrupt(&[&a, &b], Some(60));
        assert!(interrupt.expires_at.is_some());
        let cancelled = results(&interrupt, ResumeStatus::Cancelled, None, 100).unwrap();
        assert_eq!(contents(&cancelled).len(), 2);
        assert!(contents(&cancelled)[1].1.contains("cancelled"));
        let expired = expired(&interrupt, "too late");
        assert!(contents(&expired)
            .iter()
            .all(|(_, c)| c.contains("too late")));
    }

    #[test]
    fn declared_tools_are_read_from_the_runs_input() {
        let input = json!({"tools": [
            {"name": "show_card", "description": "Shows a card", "parameters": {"type": "object"}},
            {"description": "no name"},
            {"name": "bare"},
        ]});
        let specs = declared(Some(&input));
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[1].parameters, json!({"type": "object"}));
        assert!(declared(None).is_empty());
    }
}
