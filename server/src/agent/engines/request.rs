//! What one model call is given: the request every engine takes.

use crate::agent::conversation::ChatMessage;
use crate::agent::tools::ToolSpec;

/// One model call's input.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// The conversation so far, as the model should see it.
    pub conversation: Vec<ChatMessage>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// How many model calls the session's log already holds (0 for the first).
    pub model_call_index: u64,
    /// The system prompt, sent in each provider's own shape.
    pub system: Option<String>,
    /// The model the session picked, if not the engine's own.
    pub model: Option<String>,
    /// A summary of the turns left out of `conversation` (`--context-strategy
    /// summarise`), sent ahead of them in each provider's system shape.
    pub summary: Option<String>,
    /// The sampling temperature instead of the provider's setting (a replay's variant).
    pub temperature: Option<f32>,
}
