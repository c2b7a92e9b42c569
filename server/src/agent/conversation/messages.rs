//! The messages of a conversation as a model is sent them: the person's, the model's
//! (reasoning, text, tool calls), tool results, and Tandem's word to go on. A leaf of the
//! agent's data: what folds the log into them ([`super`]) and what reads them import it.

use crate::agent::attached::Attached;

/// Prefix of an encrypted value that holds a whole redacted reasoning block, not a signature.
pub const REDACTED_PREFIX: &str = "redacted:";

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRecord {
    pub id: String,
    pub name: String,
    /// The JSON arguments as the model wrote them.
    pub arguments: String,
}

/// One block of a model's reasoning.
#[derive(Debug, Clone, PartialEq)]
pub enum ReasoningBlock {
    /// Readable reasoning, with the provider's signature if it gave one.
    Thinking {
        text: String,
        signature: Option<String>,
    },
    /// Reasoning the provider returned encrypted (Anthropic `redacted_thinking`).
    Redacted { data: String },
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    User {
        text: String,
        /// The files and images it carries (`CUSTOM tandem.attachments`).
        attachments: Vec<Attached>,
    },
    Assistant {
        reasoning: Vec<ReasoningBlock>,
        text: String,
        tool_calls: Vec<ToolCallRecord>,
    },
    Tool {
        tool_call_id: String,
        name: String,
        content: String,
    },
    /// Tandem's word to the model that the answer before was stopped and is to go on from
    /// where it stopped (`CUSTOM tandem.continue`): sent as a message of the person's
    /// ([`crate::agent::prompt::CONTINUE`]), though the person wrote none.
    Continue,
}

impl ChatMessage {
    /// The files and images of a person's message (none for any other message).
    pub fn attachments_mut(&mut self) -> &mut [Attached] {
        match self {
            Self::User { attachments, .. } => attachments,
            _ => &mut [],
        }
    }

    /// A person's message of text alone.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User {
            text: text.into(),
            attachments: Vec::new(),
        }
    }
}
