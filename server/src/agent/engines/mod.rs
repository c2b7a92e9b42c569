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
mod script;
pub mod sse;
mod turn;

use std::pin::Pin;

use futures_util::Stream;
use shared::TokenUsage;

pub use anthropic::AnthropicEngine;
pub use bench::BenchEngine;
pub use demo::DemoEngine;
pub use openai::OpenAiEngine;
pub use script::{ScriptEngine, ScriptError};
pub use turn::{stream_turn, Turn, TurnToolCall};

use super::conversation::ChatMessage;
use super::tools::ToolSpec;

/// One model call's input.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// The conversation so far, as the model should see it.
    pub conversation: Vec<ChatMessage>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// How many model calls the session's log already holds (0 for the first).
    pub model_call_index: u64,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    Other(String),
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
    Usage(TokenUsage),
    Finish(FinishReason),
}

/// A model failure, with the `RUN_ERROR` code it maps to.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct EngineError {
    pub code: &'static str,
    pub message: String,
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
}
