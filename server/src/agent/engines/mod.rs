//! Model engines behind one provider-agnostic trait.
//!
//! An engine turns a [`ModelRequest`] (the conversation rebuilt from the log, the tools
//! on offer) into a stream of [`EngineEvent`]s: text, reasoning and tool-call deltas,
//! usage and a finish reason. Engines must not touch the log: the run loop records what
//! they stream.

mod anthropic;
mod bench;
mod demo;
pub mod http;
mod openai;
mod request;
mod script;
pub mod sse;
mod turn;

use std::pin::Pin;

use futures_util::Stream;
use shared::usage::CallUsage;

pub use anthropic::AnthropicEngine;
pub use bench::BenchEngine;
pub use demo::DemoEngine;
pub use openai::OpenAiEngine;
pub use request::ModelRequest;
pub use script::{ScriptEngine, ScriptError};
pub use turn::{stream_turn, Turn, TurnToolCall};

use super::attached::Accepts;
use super::context::summary::SummaryRequest;

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    Other(String),
}

impl FinishReason {
    /// As OpenTelemetry's `gen_ai.response.finish_reasons` and the usage record spell it.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Stop => "stop",
            Self::ToolCalls => "tool_calls",
            Self::Length => "length",
            Self::Other(reason) => reason,
        }
    }
}

/// One piece of a streamed model response.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineEvent {
    TextDelta(String),
    ReasoningDelta(String),
    /// The current reasoning block is complete; `signature` is the provider's opaque
    /// proof of it, to be sent back with the block on later calls.
    ReasoningEnd {
        signature: Option<String>,
    },
    /// A reasoning block the provider sent encrypted (Anthropic `redacted_thinking`).
    RedactedReasoning {
        data: String,
    },
    ToolCallStart {
        id: String,
        name: String,
    },
    ToolCallArgs {
        id: String,
        delta: String,
    },
    ToolCallEnd {
        id: String,
    },
    /// The call's token counts (no cost: the run prices them).
    Usage(CallUsage),
    Finish(FinishReason),
}

/// A model failure, with the `RUN_ERROR` code it maps to.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct EngineError {
    pub code: &'static str,
    pub message: String,
}

/// A provider's streaming wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFormat {
    /// Chat Completions chunks (OpenAI and compatible servers).
    OpenAi,
    /// Anthropic Messages events.
    Anthropic,
}

/// What a model call makes of a whole streamed response body in `format`, read in
/// `chunk`-byte pieces (for the fuzz targets: the real SSE parser and decoders).
pub fn decode_body(
    format: StreamFormat,
    body: &[u8],
    chunk: usize,
) -> Vec<Result<EngineEvent, EngineError>> {
    match format {
        StreamFormat::OpenAi => {
            let decoder = openai::ChunkDecoder::new("provider".into(), "model".into());
            sse::decode_body(body, chunk, decoder)
        }
        StreamFormat::Anthropic => {
            sse::decode_body(body, chunk, anthropic::AnthropicDecoder::default())
        }
    }
}

/// The stream an engine returns.
pub type EngineStream = Pin<Box<dyn Stream<Item = Result<EngineEvent, EngineError>> + Send>>;

/// What the page shows about the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineInfo {
    pub kind: String,
    pub model: String,
}

/// A source of model responses.
pub trait Engine: Send + Sync + 'static {
    /// The engine kind and model name.
    fn info(&self) -> EngineInfo;
    /// Starts one model call.
    fn stream(&self, request: ModelRequest) -> EngineStream;
    /// What its models take of attachments: the image limits of its provider (whether a
    /// model takes images at all is the run's per-model setting).
    fn accepts(&self) -> Accepts {
        Accepts {
            images: true,
            max_image_edge: 8_000,
            max_image_bytes: 20 * 1024 * 1024,
        }
    }
    /// Starts the call that summarises turns that left the model's view; its text is the
    /// summary. A provider makes it like any call ([`SummaryRequest::model_request`]);
    /// offline engines answer at once.
    fn summarise(&self, request: SummaryRequest) -> EngineStream {
        self.stream(request.model_request())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_decodes_the_same_whatever_its_chunking() {
        for (format, body) in [
            (
                StreamFormat::OpenAi,
                &include_bytes!("../../../../tests/fixtures/openai/tool_call.sse")[..],
            ),
            (
                StreamFormat::Anthropic,
                &include_bytes!("../../../../tests/fixtures/anthropic/thinking_tool_use.sse")[..],
            ),
        ] {
            let whole = decode_body(format, body, body.len());
            assert!(whole.iter().all(Result::is_ok), "{format:?}: {whole:?}");
            assert!(whole.len() > 3);
            for chunk in [1, 7, 64] {
                assert_eq!(
                    decode_body(format, body, chunk),
                    whole,
                    "{format:?} by {chunk}"
                );
            }
        }
        let cut = decode_body(StreamFormat::OpenAi, b"data: {\"choices\":[]}\n\n", 4);
        assert_eq!(
            cut.last().unwrap().as_ref().unwrap_err().code,
            "stream_interrupted"
        );
    }
}
