//! The Messages API stream, read event by event: a [`Decoder`] that turns Anthropic's
//! server-sent events into [`EngineEvent`]s.
//!
//! It owns the per-block state a stream needs (which index is a thinking block and the
//! signature it collected, which is a tool call and its id) and the mapping of stop
//! reasons and usage. Unknown event, block and delta types are skipped so newer API
//! features do not break a call; JSON that does not fit a known event is
//! `malformed_response`, and an `error` event is `provider_error`. It does no I/O.

use std::collections::BTreeMap;

use eventsource_stream::Event as SseEvent;
use shared::usage::CallUsage;

use super::events::{ApiError, Delta, StartBlock, StreamEvent, Usage, KNOWN_EVENTS};
use crate::agent::engines::sse::{self, Decoder};
use crate::agent::engines::{EngineError, EngineEvent, FinishReason};

/// An open content block, by what its stop must emit.
#[derive(Debug)]
enum Block {
    Text,
    Thinking {
        signature: Option<String>,
    },
    ToolUse {
        id: String,
        /// A non-empty `input` sent with the start, used if no delta follows.
        initial: Option<String>,
        streamed: bool,
    },
    /// Redacted thinking (emitted whole at its start) and block types Tandem skips.
    Done,
}

impl Block {
    fn name(&self) -> &'static str {
        match self {
            Block::Text => "text",
            Block::Thinking { .. } => "thinking",
            Block::ToolUse { .. } => "tool_use",
            Block::Done => "skipped",
        }
    }
}

/// Reads one Messages API stream.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    blocks: BTreeMap<u64, Block>,
    model: Option<String>,
    counts: Usage,
    stop_reason: Option<String>,
}

impl Decoder for AnthropicDecoder {
    fn decode(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<EngineEvent>,
    ) -> Result<bool, EngineError> {
        if !event.event.is_empty() && !KNOWN_EVENTS.contains(&event.event.as_str()) {
            return Ok(false);
        }
        match sse::parse_data::<StreamEvent>(event)? {
            StreamEvent::MessageStart { message } => {
                self.model = message.model;
                self.add_usage(message.usage);
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => self.start(index, content_block, out)?,
            StreamEvent::ContentBlockDelta { index, delta } => self.delta(index, delta, out)?,
            StreamEvent::ContentBlockStop { index } => match self.blocks.remove(&index) {
                Some(block) => close(block, out),
                None => return Err(not_open("content_block_stop", index)),
            },
            StreamEvent::MessageDelta { delta, usage } => {
                self.stop_reason = delta.stop_reason.or(self.stop_reason.take());
                self.add_usage(usage);
            }
            StreamEvent::MessageStop => {
                self.finish(out);
                return Ok(true);
            }
            StreamEvent::Error { error } => return Err(stream_error(error)),
            StreamEvent::Ping | StreamEvent::Unknown => {}
        }
        Ok(false)
    }
}

impl AnthropicDecoder {
    fn start(
        &mut self,
        index: u64,
        content_block: StartBlock,
        out: &mut Vec<EngineEvent>,
    ) -> Result<(), EngineError> {
        if self.blocks.contains_key(&index) {
            return Err(sse::malformed(format!(
                "Anthropic started content block {index} twice"
            )));
        }
        let block = match content_block {
            StartBlock::Text { text } => {
                push_text(out, EngineEvent::TextDelta, text);
                Block::Text
            }
            StartBlock::Thinking {
                thinking,
                signature,
            } => {
                push_text(out, EngineEvent::ReasoningDelta, thinking);
                let signature = signature.filter(|s| !s.is_empty());
                Block::Thinking { signature }
            }
            StartBlock::RedactedThinking { data } => {
                out.push(EngineEvent::RedactedReasoning { data });
                Block::Done
            }
            StartBlock::ToolUse { id, name, input } => {
                out.push(EngineEvent::ToolCallStart {
                    id: id.clone(),
                    name,
                });
                let initial = input
                    .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
                    .map(|v| v.to_string());
                Block::ToolUse {
                    id,
                    initial,
                    streamed: false,
                }
            }
            StartBlock::Other => Block::Done,
        };
        self.blocks.insert(index, block);
        Ok(())
    }

    fn delta(
        &mut self,
        index: u64,
        delta: Delta,
        out: &mut Vec<EngineEvent>,
    ) -> Result<(), EngineError> {
        let Some(block) = self.blocks.get_mut(&index) else {
            return Err(not_open("content_block_delta", index));
        };
        match (block, delta) {
            (Block::Text, Delta::Text { text }) => push_text(out, EngineEvent::TextDelta, text),
            (Block::Thinking { .. }, Delta::Thinking { thinking }) => {
                push_text(out, EngineEvent::ReasoningDelta, thinking)
            }
            (Block::Thinking { signature }, Delta::Signature { signature: piece }) => {
                signature.get_or_insert_with(String::new).push_str(&piece)
            }
            (Block::ToolUse { id, streamed, .. }, Delta::InputJson { partial_json }) => {
                if !partial_json.is_empty() {
                    *streamed = true;
                    out.push(EngineEvent::ToolCallArgs {
                        id: id.clone(),
                        delta: partial_json,
                    });
                }
            }
            (Block::Done, _) | (_, Delta::Other) => {}
            (block, delta) => {
                return Err(sse::malformed(format!(
                    "Anthropic sent a `{}` for content block {index}, a {} block",
                    delta.name(),
                    block.name()
                )))
            }
        }
        Ok(())
    }

    /// Closes blocks the provider left open, then reports usage and the stop reason.
    fn finish(&mut self, out: &mut Vec<EngineEvent>) {
        for (_, block) in std::mem::take(&mut self.blocks) {
            close(block, out);
        }
        out.push(EngineEvent::Usage(self.usage()));
        let reason = match self.stop_reason.as_deref() {
            Some("end_turn" | "stop_sequence") => FinishReason::Stop,
            Some("tool_use") => FinishReason::ToolCalls,
            Some("max_tokens") => FinishReason::Length,
            Some(other) => FinishReason::Other(other.to_string()),
            None => FinishReason::Other("no stop_reason".into()),
        };
        out.push(EngineEvent::Finish(reason));
    }

    /// Keeps the latest of each count (`message_delta` repeats them cumulatively).
    fn add_usage(&mut self, usage: Option<Usage>) {
        let Some(usage) = usage else { return };
        let counts = &mut self.counts;
        counts.input_tokens = usage.input_tokens.or(counts.input_tokens);
        counts.cache_creation_input_tokens = usage
            .cache_creation_input_tokens
            .or(counts.cache_creation_input_tokens);
        counts.cache_read_input_tokens = usage
            .cache_read_input_tokens
            .or(counts.cache_read_input_tokens);
        counts.output_tokens = usage.output_tokens.or(counts.output_tokens);
    }

    /// The call's usage. Input tokens count cache reads and writes too, as other
    /// providers' prompt counts do.
    fn usage(&self) -> CallUsage {
        let counts = &self.counts;
        let input = [
            counts.input_tokens,
            counts.cache_creation_input_tokens,
            counts.cache_read_input_tokens,
        ];
        CallUsage {
            provider: Some("anthropic".into()),
            model: self.model.clone(),
            input_tokens: input.iter().flatten().sum(),
            output_tokens: counts.output_tokens.unwrap_or(0),
            cached_input_tokens: counts.cache_read_input_tokens.unwrap_or(0),
            ..CallUsage::default()
        }
    }
}

/// What a block's `content_block_stop` emits.
fn close(block: Block, out: &mut Vec<EngineEvent>) {
    match block {
        Block::Thinking { signature } => out.push(EngineEvent::ReasoningEnd { signature }),
        Block::ToolUse {
            id,
            initial,
            streamed,
        } => {
            if let (Some(arguments), false) = (initial, streamed) {
                out.push(EngineEvent::ToolCallArgs {
                    id: id.clone(),
                    delta: arguments,
                });
            }
            out.push(EngineEvent::ToolCallEnd { id });
        }
        Block::Text | Block::Done => {}
    }
}

fn push_text(out: &mut Vec<EngineEvent>, event: fn(String) -> EngineEvent, text: String) {
    if !text.is_empty() {
        out.push(event(text));
    }
}

fn not_open(event: &str, index: u64) -> EngineError {
    sse::malformed(format!(
        "Anthropic sent `{event}` for content block {index}, which is not open"
    ))
}

fn stream_error(error: ApiError) -> EngineError {
    let message = if error.message.is_empty() {
        "no message".to_string()
    } else {
        error.message
    };
    EngineError {
        code: "provider_error",
        message: format!(
            "Anthropic reported an error mid-response: {message} ({})",
            error.kind
        ),
    }
}
