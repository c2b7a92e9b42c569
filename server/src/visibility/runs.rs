//! What a share viewer gets of a run's start and end: `RUN_STARTED` (with the person's
//! messages of an AG-UI input, nothing else of it) and `RUN_FINISHED` (its outcome, the
//! interrupts it waits on, its usage).

use serde_json::{json, Value};
use shared::InputKind;

use super::fields::{filter, items, scalar, scalars, scalars_of, strings, Object};
use super::{results, Visibility};

/// The interrupt `kind` of a tool call waiting for approval (`agent::approval`).
const TOOL_APPROVAL: &str = "tool_approval";
/// The interrupt `kind` of an AG-UI client's own tool calls (`agent::client_tools`).
const CLIENT_TOOLS: &str = "client_tools";

/// The fields of an AG-UI [`shared::TokenUsage`] (`RUN_FINISHED.usage[]`).
pub(super) const TOKEN_USAGE: &[&str] = &[
    "provider",
    "model",
    "inputTokens",
    "outputTokens",
    "reasoningTokens",
];

/// `RUN_STARTED`: the ids, and of an AG-UI client's input what the page shows.
pub(super) fn started(event: &Object, visibility: &Visibility) -> Object {
    filter(event, |key, value| match key {
        "threadId" | "runId" | "parentRunId" => scalar(value),
        "input" => input(value, event, visibility),
        _ => None,
    })
}

/// A `RunAgentInput` reduced to the person's messages (user messages and the client's
/// tool results, as `shared::run_input` reads them back; a result as
/// [`results::content`] shows it), still a valid `RunAgentInput`: never its `context`,
/// `state`, `forwardedProps`, tool definitions, `resume` answers or fields of later
/// protocol versions.
fn input(input: &Value, event: &Object, visibility: &Visibility) -> Option<Value> {
    let input = input.as_object()?;
    let id = |key: &str| {
        let own = input.get(key).filter(|id| id.is_string());
        own.or_else(|| event.get(key)).and_then(scalar)
    };
    let messages = input
        .get("messages")
        .and_then(|m| items(m, |one| message(one, visibility)));
    Some(json!({
        "threadId": id("threadId")?,
        "runId": id("runId")?,
        "messages": messages.unwrap_or_else(|| json!([])),
        "tools": [],
        "context": [],
    }))
}

/// A user or tool message of an input: its id, role, text (a tool's result as the link
/// shows results) and the call it answers.
fn message(message: &Value, visibility: &Visibility) -> Option<Value> {
    let message = message.as_object()?;
    let role = message.get("role")?.as_str()?;
    if !matches!(role, "user" | "tool") {
        return None;
    }
    Some(Value::Object(filter(message, |key, value| match key {
        "id" | "role" | "toolCallId" => scalar(value),
        "content" if role == "tool" => results::content(value, visibility),
        "content" => content(value),
        _ => None,
    })))
}

/// A message's content: its text, or its text parts (other parts left out).
fn content(content: &Value) -> Option<Value> {
    match content {
        Value::String(_) => Some(content.clone()),
        Value::Array(_) => items(content, |part| {
            let part = part.as_object()?;
            let text = part.get("text")?.as_str()?;
            (part.get("type")?.as_str()? == "text").then(|| json!({"type": "text", "text": text}))
        }),
        _ => None,
    }
}

/// `RUN_FINISHED`: the ids, the outcome and the usage. Its `result` is left out:
/// Tandem never sets it, so nobody has decided what one may hold.
pub(super) fn finished(event: &Object, visibility: &Visibility) -> Object {
    filter(event, |key, value| match key {
        "threadId" | "runId" => scalar(value),
        "outcome" => outcome(value, visibility),
        "usage" => items(value, |usage| scalars_of(usage, TOKEN_USAGE)),
        _ => None,
    })
}

/// An outcome: success with the client's pending calls, the interrupts a pause waits
/// on, or cancelled; an outcome of another type is left out.
fn outcome(outcome: &Value, visibility: &Visibility) -> Option<Value> {
    let outcome = outcome.as_object()?;
    let shown = match outcome.get("type")?.as_str()? {
        "success" => filter(outcome, |key, value| match key {
            "type" => scalar(value),
            "pendingToolCallIds" => strings(value),
            _ => None,
        }),
        "interrupt" => filter(outcome, |key, value| match key {
            "type" => scalar(value),
            "interrupts" => items(value, |i| interrupt(i, visibility).map(Value::Object)),
            _ => None,
        }),
        "cancelled" => scalars(outcome, &["type"]),
        _ => return None,
    };
    Some(Value::Object(shown))
}

/// An interrupt: what it asks and how to answer it, its metadata as [`metadata`] shows
/// it. The answer's JSON Schema is shown as it is (it is the question's form).
pub(super) fn interrupt(interrupt: &Value, visibility: &Visibility) -> Option<Object> {
    let interrupt = interrupt.as_object()?;
    Some(filter(interrupt, |key, value| match key {
        "id" | "reason" | "message" | "toolCallId" | "expiresAt" => scalar(value),
        "responseSchema" => Some(value.clone()),
        "metadata" => metadata(value, visibility),
        _ => None,
    }))
}

/// An interrupt's metadata, by its `kind`: a question's control (`choices`, the form's
/// `schema`), an approval's tool and its arguments' schema, a client-tools wait's calls;
/// the arguments only if the link shows them. Metadata of another kind is left out.
fn metadata(metadata: &Value, visibility: &Visibility) -> Option<Value> {
    let metadata = metadata.as_object()?;
    let arguments = visibility.shows_arguments();
    let shown = match metadata.get("kind")?.as_str()? {
        TOOL_APPROVAL => filter(metadata, |key, value| match key {
            "kind" | "toolName" => scalar(value),
            "argumentsSchema" => Some(value.clone()),
            "arguments" if arguments => Some(value.clone()),
            _ => None,
        }),
        CLIENT_TOOLS => filter(metadata, |key, value| match key {
            "kind" => scalar(value),
            "toolCalls" => items(value, |call| client_call(call, arguments)),
            _ => None,
        }),
        kind if is_question(kind) => filter(metadata, |key, value| match key {
            "kind" => scalar(value),
            "choices" => strings(value),
            "schema" => Some(value.clone()),
            _ => None,
        }),
        _ => return None,
    };
    Some(Value::Object(shown))
}

/// One call a client-tools wait lists: its id and tool, and its arguments if shown.
fn client_call(call: &Value, arguments: bool) -> Option<Value> {
    Some(Value::Object(filter(
        call.as_object()?,
        |key, value| match key {
            "id" | "name" => scalar(value),
            "arguments" if arguments => Some(value.clone()),
            _ => None,
        },
    )))
}

/// Whether `kind` is one of `request_input`'s controls.
fn is_question(kind: &str) -> bool {
    serde_json::from_value::<InputKind>(Value::String(kind.into())).is_ok()
}
