//! Sample events of every kind the log can hold, for the share-link filter's tests.
//!
//! Their strings are markers that say who may see them: `shown_…` (and numbers from 7000
//! to 7999) leave for every link, `args_…` only for links that show tool arguments,
//! `thought_…` only for links that show reasoning, `files_…` only for links that show
//! attachments, `state_…` only for links that show the shared state, `recap_…` only for links that hide nothing, `canary_…` for none. [`planted`] adds a `canary_…` field to every object
//! but the free-form ones (schemas, arguments), which a viewer gets whole or not at all.

use serde_json::{json, Value};
use shared::custom;

/// Objects a viewer gets whole when shown: nothing is planted in them.
const FREE_FORM: &[&str] = &[
    "responseSchema",
    "argumentsSchema",
    "schema",
    "arguments",
    "snapshot",
    "delta",
    "content",
    "patch",
];

/// Every sample, with canaries planted.
pub(super) fn all() -> Vec<Value> {
    let mut samples = runs();
    samples.extend(messages_and_tools());
    samples.extend(state());
    samples.extend(activity());
    samples.extend(
        custom::ALL
            .iter()
            .map(|name| custom_event(name, custom_value(name))),
    );
    samples.extend(undecided());
    samples.into_iter().map(planted).collect()
}

/// `value` with an unknown field planted in it and in every object inside it.
pub(super) fn planted(mut value: Value) -> Value {
    plant(&mut value, &mut 0);
    value
}

fn plant(value: &mut Value, count: &mut usize) {
    match value {
        Value::Object(object) => {
            for (key, inner) in object.iter_mut() {
                if !FREE_FORM.contains(&key.as_str()) {
                    plant(inner, count);
                }
            }
            *count += 1;
            object.insert(
                format!("canary_field_{count}"),
                json!(format!("canary_value_{count}")),
            );
        }
        Value::Array(items) => items.iter_mut().for_each(|item| plant(item, count)),
        _ => {}
    }
}

/// A `CUSTOM` event.
pub(super) fn custom_event(name: &str, value: Value) -> Value {
    json!({"type": "CUSTOM", "name": name, "value": value, "timestamp": 1})
}

/// An AG-UI input with everything a client may send beside the person's messages.
pub(super) fn agui_input() -> Value {
    json!({"threadId": "shown_thread", "runId": "shown_client_run", "parentRunId": "canary_parent",
        "messages": [
            {"id": "shown_u1", "role": "user", "content": [
                {"type": "text", "text": "shown_hello"},
                {"type": "binary", "mimeType": "image/png", "data": "canary_image"}]},
            {"id": "shown_t1", "role": "tool", "toolCallId": "shown_c9", "content": "args_result",
             "error": "canary_error"},
            {"id": "canary_a1", "role": "assistant", "content": "canary_assistant", "toolCalls": [
                {"id": "canary_c", "type": "function",
                 "function": {"name": "canary_f", "arguments": "canary_args"}}]},
            {"id": "canary_s1", "role": "system", "content": "canary_system"}],
        "tools": [{"name": "canary_tool", "description": "canary_description",
                   "parameters": {"type": "object", "properties": {"canary_p": {}}}}],
        "context": [{"description": "canary_context", "value": "canary_context_value"}],
        "state": {"secret": "canary_state"},
        "forwardedProps": {"model": "canary_props"},
        "resume": [{"interruptId": "canary_i", "status": "resolved",
                    "payload": {"approved": true, "arguments": {"content": "canary_resume"}}}]})
}

/// The interrupts a run may wait on, one of each kind, and one of a kind nobody decided.
pub(super) fn interrupts() -> Value {
    json!([
        {"id": "shown_i1", "reason": "tool_approval", "message": "shown_allow", "toolCallId": "shown_c1",
         "expiresAt": "shown_2030", "responseSchema": {"properties": {"shown_approved": {}}},
         "metadata": {"kind": "tool_approval", "toolName": "shown_write_file",
                      "argumentsSchema": {"required": ["shown_path"]},
                      "arguments": {"content": "args_model"}}},
        {"id": "shown_i2", "reason": "input_required", "message": "shown_which",
         "metadata": {"kind": "choice", "choices": ["shown_a", "shown_b", {"canary_choice": 1}]}},
        {"id": "shown_i3", "reason": "input_required",
         "metadata": {"kind": "form", "schema": {"properties": {"shown_name": {}}}}},
        {"id": "shown_i4", "reason": "client_tools", "toolCallId": "shown_c2",
         "metadata": {"kind": "client_tools", "toolCalls": [
             {"id": "shown_c2", "name": "shown_show_card", "arguments": {"title": "args_card"}}]}},
        {"id": "shown_i5", "reason": "shown_later", "metadata": {"kind": "canary_kind", "x": "canary_meta"}},
    ])
}

fn runs() -> Vec<Value> {
    let finished = |outcome: Value| {
        json!({"type": "RUN_FINISHED", "threadId": "shown_thread", "runId": "shown_run",
               "result": {"x": "canary_result"}, "outcome": outcome, "timestamp": 1,
               "usage": [{"provider": "shown_openai", "model": "shown_gpt", "inputTokens": 7001,
                          "outputTokens": 7002, "reasoningTokens": 7003}]})
    };
    vec![
        json!({"type": "RUN_STARTED", "threadId": "shown_thread", "runId": "shown_run",
               "parentRunId": "shown_parent", "input": agui_input(), "timestamp": 1}),
        finished(json!({"type": "interrupt", "interrupts": interrupts()})),
        finished(json!({"type": "success", "pendingToolCallIds": ["shown_c2"]})),
        finished(json!({"type": "cancelled"})),
        finished(json!({"type": "canary_outcome", "x": "canary_outcome_field"})),
        json!({"type": "RUN_ERROR", "message": "shown_failed", "code": "shown_code", "timestamp": 1}),
    ]
}

fn messages_and_tools() -> Vec<Value> {
    // Results repeat what their calls were given: a link that hides arguments hides them.
    let edited = r#"{"result":{"args_written":"args_a.txt"},"argumentsEditedByThePerson":{"content":"args_edited"}}"#;
    let long = json!({"result": {"args_ok": true},
                      "argumentsEditedByThePerson": {"content": "args_long ".repeat(100)}});
    let truncated = crate::agent::tools::truncate_result(long.to_string(), 400);
    let result = |content: &str| {
        json!({"type": "TOOL_CALL_RESULT", "messageId": "shown_m3", "toolCallId": "shown_c1",
               "role": "tool", "content": content, "timestamp": 1})
    };
    vec![
        json!({"type": "STEP_STARTED", "stepName": "shown_step", "timestamp": 1}),
        json!({"type": "STEP_FINISHED", "stepName": "shown_step", "timestamp": 1}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "shown_m1", "role": "assistant",
               "name": "shown_name", "timestamp": 1}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "shown_m1", "delta": "shown_delta", "timestamp": 1}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "shown_m1", "timestamp": 1}),
        json!({"type": "REASONING_START", "messageId": "thought_r1", "timestamp": 1}),
        json!({"type": "REASONING_MESSAGE_START", "messageId": "thought_r2", "role": "reasoning", "timestamp": 1}),
        json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "thought_r2", "delta": "thought_plan", "timestamp": 1}),
        json!({"type": "REASONING_MESSAGE_END", "messageId": "thought_r2", "timestamp": 1}),
        json!({"type": "REASONING_END", "messageId": "thought_r1", "timestamp": 1}),
        json!({"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message", "entityId": "canary_entity",
               "encryptedValue": "canary_signature", "timestamp": 1}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "shown_c1", "toolCallName": "shown_write",
               "parentMessageId": "shown_m1", "timestamp": 1}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "args_c1", "delta": r#"{"content":"args_delta"}"#,
               "timestamp": 1}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "shown_c1", "timestamp": 1}),
        result(r#"{"args_written":"args_b.txt"}"#),
        result(r#"{"error":"args_no_such_file"}"#),
        result("args_echo"),
        result(edited),
        result(&truncated),
    ]
}

/// A value of each of Tandem's `CUSTOM` names, as Tandem writes it.
fn custom_value(name: &str) -> Value {
    match name {
        custom::STOP_REQUESTED => json!({"runId": "shown_run"}),
        custom::RUN_RECOVERED => json!({"runId": "shown_run", "attempt": 7005}),
        custom::TOOL_APPROVAL => json!({"interruptId": "shown_i1", "toolCallId": "shown_c1",
            "approved": true, "edited": true, "reason": "shown_because",
            "arguments": {"content": "args_decided"}}),
        custom::RUN_QUEUED => json!({"runId": "shown_run", "position": 7006}),
        custom::USAGE => json!({"provider": "shown_openai", "model": "shown_gpt",
            "inputTokens": 7007, "outputTokens": 7008, "reasoningTokens": 7009,
            "cachedInputTokens": 7010, "costUsd": 7011, "finishReason": "shown_stop", "retries": 7016}),
        custom::CLIENT_TOOLS_PENDING => interrupts()[3].clone(),
        custom::CONTEXT_TRIMMED => json!({"firstUserMessage": 7012, "droppedMessages": 7013,
            "budgetTokens": 7014, "estimatedTokens": 7015}),
        custom::CONTEXT_SUMMARY => json!({"firstUserMessage": 2, "summary": "recap_wrote_it",
            "summarisedMessages": 3}),
        custom::MODEL_SELECTED => json!({"model": "shown_model"}),
        custom::MODEL_FALLBACK => json!({"from": "shown_model_a", "to": "shown_model_b",
            "code": "shown_rate_limited", "message": "shown_busy"}),
        custom::MCP_SERVER_UNAVAILABLE => json!({"server": "shown_server",
            "toolCallId": "shown_c1", "reason": "shown_died", "message": "shown_down"}),
        custom::FEEDBACK => json!({"runId": "shown_run", "rating": "shown_up",
            "comment": "canary_private_comment", "user": "canary_owner"}),
        custom::BUDGET_DECISION => json!({"interruptId": "shown_i6", "continue": "shown_yes",
            "pastBudget": "shown_past"}),
        custom::CONTINUE => json!({"runId": "shown_run", "messageId": "shown_m1",
            "clientMessageId": "canary_request_id"}),
        custom::TRACE_CONTEXT => {
            json!({"traceparent": "canary_00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
        }
        custom::INSTRUCTIONS => json!({"scope": "told_conversation", "text": "told_be_brief"}),
        custom::REPLAY => json!({"replayId": "shown_rp1", "variant": "shown_label", "trial": 7001,
            "sourceSessionId": "canary_source", "fromSeq": 9002, "toSeq": 9003,
            "systemPrompt": "canary_prompt", "temperature": 0.5}),
        custom::REPLAY_DIVERGED => json!({"toolCallId": "shown_c1",
            "toolCallName": "shown_tool", "recordedName": "shown_other"}),
        custom::REPLAY_VERDICT => json!({"model": "shown_judge", "passed": true,
            "reason": "recap_it_says"}),
        custom::ATTACHMENTS => {
            json!({"messageId": "files_m1", "toolCallId": "files_c1", "attachments": [
            {"id": "files_a1", "name": "files_cat.png", "mediaType": "files_image/png",
             "bytes": 17, "sha256": "files_abc"}]})
        }
        other => panic!("no sample of CUSTOM {other}: decide what a share viewer sees of it"),
    }
}

/// A tool's progress: its counts shown whatever the link hides, its words as results are.
pub(super) fn activity() -> Vec<Value> {
    vec![
        json!({"type": "ACTIVITY_SNAPSHOT", "timestamp": 1, "messageId": "shown_act",
               "activityType": "shown_progress", "replace": true,
               "content": {"toolCallId": "shown_c1", "progress": 7020, "total": 7021,
                           "message": "args_step"}}),
        json!({"type": "ACTIVITY_DELTA", "timestamp": 1, "messageId": "shown_act",
               "activityType": "shown_progress",
               "patch": [{"op": "replace", "path": "/progress", "value": 7022},
                         {"op": "replace", "path": "/message", "value": "args_later"}]}),
    ]
}

/// The shared state's events: documents a link shows whole, or not at all.
fn state() -> Vec<Value> {
    vec![
        json!({"type": "STATE_SNAPSHOT", "timestamp": 1,
               "snapshot": {"plan": [{"step": "state_step", "status": "state_done"}]}}),
        json!({"type": "STATE_DELTA", "timestamp": 1,
               "delta": [{"op": "add", "path": "/state_key", "value": "state_value"}]}),
    ]
}

/// What nobody decided on, or what breaks the shape a rule expects.
fn undecided() -> Vec<Value> {
    vec![
        json!({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "canary_message"}], "timestamp": 1}),
        json!({"messageId": "canary_untyped"}),
        json!({"type": "STEP_STARTED", "stepName": ["canary_not_a_name"], "timestamp": 1}),
        custom_event("tandem.canary_later", json!({"x": "canary_later_value"})),
        custom_event(custom::MODEL_SELECTED, json!("canary_not_an_object")),
        custom_event(
            custom::RUN_QUEUED,
            json!({"runId": {"canary_nested": "canary_deep"}, "position": 7016}),
        ),
    ]
}
