//! The Messages API request body: a [`ModelRequest`] and the provider settings as the
//! JSON `POST /v1/messages` expects.
//!
//! It owns the translation of the conversation into content blocks (the system prompt,
//! with the summary of left-out turns as a second `system` text block) and the API's shape
//! rules: roles alternate (consecutive same-role messages merge, so all tool results of
//! a turn travel in one user message), no message is empty, signed thinking blocks come
//! first in an assistant turn and unsigned ones (from another engine) are dropped. It
//! does no I/O and never sees the API key.

use serde_json::{json, Map, Value};

use crate::agent::attached::{Attached, Content};
use crate::agent::context::summary;
use crate::agent::conversation::{ChatMessage, ReasoningBlock, ToolCallRecord};
use crate::agent::engines::ModelRequest;
use crate::agent::prompt;
use crate::agent::tools::ToolSpec;
use crate::config::ProviderSettings;

/// The request body for one streamed call.
pub fn body(settings: &ProviderSettings, request: &ModelRequest) -> Value {
    let mut body = Map::new();
    let model = request.model.as_deref().unwrap_or(&settings.model);
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(settings.max_tokens));
    body.insert("stream".into(), json!(true));
    if let Some(system) = system(request) {
        body.insert("system".into(), system);
    }
    body.insert(
        "messages".into(),
        Value::Array(messages(&request.conversation)),
    );
    if !request.tools.is_empty() {
        body.insert("tools".into(), tools(&request.tools));
    }
    match (
        settings.thinking_budget,
        request.temperature.or(settings.temperature),
    ) {
        (Some(budget), _) => {
            // The API refuses `temperature` together with extended thinking.
            let thinking = json!({"type": "enabled", "budget_tokens": budget});
            body.insert("thinking".into(), thinking);
        }
        (None, Some(temperature)) => {
            body.insert("temperature".into(), temperature_json(temperature));
        }
        (None, None) => {}
    }
    Value::Object(body)
}

/// The system prompt as a string; with a summary of left-out turns, both as text blocks
/// (the prompt first).
fn system(request: &ModelRequest) -> Option<Value> {
    let Some(summary) = request.summary.as_deref().map(summary::framed) else {
        return request.system.as_ref().map(|prompt| json!(prompt));
    };
    let blocks: Vec<Value> = request
        .system
        .iter()
        .chain(std::iter::once(&summary))
        .map(|text| json!({"type": "text", "text": text}))
        .collect();
    Some(Value::Array(blocks))
}

/// `0.7f32` as `0.7`, not as the `0.699999988079071` a plain widening gives.
fn temperature_json(temperature: f32) -> Value {
    temperature
        .to_string()
        .parse::<f64>()
        .map_or_else(|_| json!(temperature), |value| json!(value))
}

fn tools(specs: &[ToolSpec]) -> Value {
    specs
        .iter()
        .map(|spec| {
            json!({
                "name": spec.name,
                "description": spec.description,
                "input_schema": spec.parameters,
            })
        })
        .collect()
}

/// The conversation as alternating `user`/`assistant` messages with content blocks.
pub fn messages(conversation: &[ChatMessage]) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in conversation {
        let (role, blocks) = match message {
            ChatMessage::User { text, attachments } => ("user", user_blocks(text, attachments)),
            ChatMessage::Continue => ("user", user_blocks(prompt::CONTINUE, &[])),
            ChatMessage::Assistant {
                reasoning,
                text,
                tool_calls,
            } => ("assistant", assistant_blocks(reasoning, text, tool_calls)),
            ChatMessage::Tool {
                tool_call_id,
                content,
                ..
            } => ("user", vec![tool_result(tool_call_id, content)]),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// Each attachment (an image as an `image` block, a PDF as a `document` block, anything
/// else as text), then the text: the API reads images best ahead of what is asked of them.
fn user_blocks(text: &str, attachments: &[Attached]) -> Vec<Value> {
    let mut blocks: Vec<Value> = attachments.iter().map(attachment_block).collect();
    // The API refuses empty text blocks.
    if !text.is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    blocks
}

fn attachment_block(attached: &Attached) -> Value {
    match attached.content.as_deref() {
        Some(Content::Image {
            media_type, base64, ..
        }) => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": base64},
        }),
        Some(Content::Pdf { base64, .. }) => json!({
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": base64},
            "title": attached.attachment.name,
        }),
        _ => json!({"type": "text", "text": attached.as_text().unwrap_or_default()}),
    }
}

/// Thinking first (only what can be sent back), then text, then tool calls.
fn assistant_blocks(
    reasoning: &[ReasoningBlock],
    text: &str,
    tool_calls: &[ToolCallRecord],
) -> Vec<Value> {
    let mut blocks: Vec<Value> = reasoning.iter().filter_map(reasoning_block).collect();
    if !text.is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    blocks.extend(tool_calls.iter().map(|call| {
        json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": tool_input(&call.arguments),
        })
    }));
    blocks
}

/// A reasoning block in the API's shape; `None` for thinking without a signature, which
/// the API would refuse (it cannot verify the block).
fn reasoning_block(block: &ReasoningBlock) -> Option<Value> {
    match block {
        ReasoningBlock::Thinking {
            text,
            signature: Some(signature),
        } if !signature.is_empty() => Some(json!({
            "type": "thinking",
            "thinking": text,
            "signature": signature,
        })),
        ReasoningBlock::Thinking { .. } => None,
        ReasoningBlock::Redacted { data } => {
            Some(json!({"type": "redacted_thinking", "data": data}))
        }
    }
}

/// The call's arguments as an object; `{}` when they are empty, not JSON or not an object
/// (the API requires `input` to be an object).
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => json!({}),
    }
}

fn tool_result(tool_call_id: &str, content: &str) -> Value {
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": tool_call_id,
        "content": content,
    });
    let failed = serde_json::from_str::<Value>(content)
        .ok()
        .is_some_and(|value| value.get("error").is_some());
    if failed {
        block["is_error"] = json!(true);
    }
    block
}
