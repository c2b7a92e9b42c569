//! The Chat Completions request body: a [`ModelRequest`] as OpenAI-compatible JSON.
//!
//! It owns the mapping of the conversation to `messages` (the system prompt and the
//! summary of left-out turns as `system` messages, user, assistant with `tool_calls`,
//! `tool` results) and of the tool specs to `tools`. Reasoning is not sent
//! back: Chat Completions has no field for it, and DeepSeek rejects `reasoning_content`
//! in input messages. It must not send anything over the network or read headers.

use serde_json::{json, Value};

use crate::agent::attached::{Attached, Content};
use crate::agent::context::summary;
use crate::agent::conversation::{ChatMessage, ToolCallRecord};
use crate::agent::engines::ModelRequest;
use crate::agent::prompt;
use crate::agent::tools::ToolSpec;
use crate::config::ProviderSettings;

/// The JSON body of one streamed call.
///
/// OpenAI's own API gets `max_completion_tokens` (its reasoning models refuse
/// `max_tokens`); compatible servers (Ollama, llama.cpp, vLLM) get `max_tokens`, the only
/// one they read.
pub fn body(request: &ModelRequest, settings: &ProviderSettings) -> Value {
    let limit = if settings.base_url == crate::config::OPENAI_URL {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    let mut body = json!({
        "model": request.model.as_deref().unwrap_or(&settings.model),
        "messages": with_system(request, messages(&request.conversation)),
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    body[limit] = json!(settings.max_tokens);
    let temperature = request.temperature.or(settings.temperature);
    if let Some(temperature) = temperature.and_then(temperature_value) {
        body["temperature"] = temperature;
    }
    if !request.tools.is_empty() {
        body["tools"] = request.tools.iter().map(tool).collect();
    }
    body
}

/// The messages after a `system` message holding the prompt, if there is one, and a
/// second one holding the summary of the turns left out, if there is one.
fn with_system(request: &ModelRequest, messages: Vec<Value>) -> Vec<Value> {
    let summary = request.summary.as_deref().map(summary::framed);
    request
        .system
        .iter()
        .chain(summary.iter())
        .map(|text| json!({"role": "system", "content": text}))
        .chain(messages)
        .collect()
}

/// The conversation as Chat Completions messages, in order.
pub fn messages(conversation: &[ChatMessage]) -> Vec<Value> {
    conversation.iter().map(message).collect()
}

fn message(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::User { text, attachments } if attachments.is_empty() => {
            json!({"role": "user", "content": text})
        }
        ChatMessage::Continue => json!({"role": "user", "content": prompt::CONTINUE}),
        ChatMessage::User { text, attachments } => {
            json!({"role": "user", "content": user_parts(text, attachments)})
        }
        ChatMessage::Assistant {
            text, tool_calls, ..
        } => assistant(text, tool_calls),
        ChatMessage::Tool {
            tool_call_id,
            content,
            ..
        } => json!({"role": "tool", "tool_call_id": tool_call_id, "content": content}),
    }
}

/// A message with attachments as content parts: its text, then each attachment (an
/// image as an `image_url` data URL, a PDF as a `file` part, anything else as text).
fn user_parts(text: &str, attachments: &[Attached]) -> Vec<Value> {
    let mut parts: Vec<Value> = Vec::with_capacity(attachments.len() + 1);
    if !text.is_empty() {
        parts.push(json!({"type": "text", "text": text}));
    }
    for attached in attachments {
        let part = match attached.content.as_deref() {
            Some(Content::Image {
                media_type, base64, ..
            }) => json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{media_type};base64,{base64}")},
            }),
            Some(Content::Pdf { base64, .. }) => json!({
                "type": "file",
                "file": {
                    "filename": attached.attachment.name,
                    "file_data": format!("data:application/pdf;base64,{base64}"),
                },
            }),
            _ => json!({"type": "text", "text": attached.as_text().unwrap_or_default()}),
        };
        parts.push(part);
    }
    parts
}

/// An assistant turn: its text (`null` when it only called tools) and its calls.
fn assistant(text: &str, tool_calls: &[ToolCallRecord]) -> Value {
    let content = if text.is_empty() && !tool_calls.is_empty() {
        Value::Null
    } else {
        Value::String(text.to_string())
    };
    let mut message = json!({"role": "assistant", "content": content});
    if !tool_calls.is_empty() {
        message["tool_calls"] = tool_calls.iter().map(tool_call).collect();
    }
    message
}

/// A logged call; `arguments` stays a JSON string, `{}` when the model sent none.
fn tool_call(call: &ToolCallRecord) -> Value {
    let arguments = if call.arguments.trim().is_empty() {
        "{}"
    } else {
        call.arguments.as_str()
    };
    json!({
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    })
}

fn tool(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    })
}

/// The temperature as the decimal the person typed: an `f32` widened to `f64` would
/// send `0.699999988079071` for 0.7. `None` for a value JSON cannot hold (NaN).
fn temperature_value(temperature: f32) -> Option<Value> {
    let decimal: f64 = temperature.to_string().parse().ok()?;
    serde_json::Number::from_f64(decimal).map(Value::Number)
}
