//! The Messages API stream's wire types: the JSON of each server-sent event, as the
//! streaming documentation describes it, for `serde` to read.
//!
//! Only what Tandem uses is modelled; every other field is ignored, and unknown event,
//! block and delta types read as `Unknown`/`Other` so newer API features parse. It
//! holds no state and makes no decisions: the decoder in `stream` does.

use serde::Deserialize;
use serde_json::Value;

/// The event names the Messages API documents; any other name is skipped unread.
pub const KNOWN_EVENTS: [&str; 8] = [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
];

/// One event's JSON data, by its `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: u64,
        content_block: StartBlock,
    },
    ContentBlockDelta {
        index: u64,
        delta: Delta,
    },
    ContentBlockStop {
        index: u64,
    },
    MessageDelta {
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<Usage>,
    },
    MessageStop,
    Ping,
    Error {
        error: ApiError,
    },
    #[serde(other)]
    Unknown,
}

/// `message_start`'s message: the model that answers and the input usage.
#[derive(Debug, Deserialize)]
pub struct MessageStart {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

/// Token counts; `message_delta` repeats them cumulatively.
#[derive(Debug, Default, Deserialize)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub cache_creation_input_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

/// The `content_block` of `content_block_start`, by its `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StartBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    #[serde(other)]
    Other,
}

/// The `delta` of `content_block_delta`, by its `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(other)]
    Other,
}

impl Delta {
    /// The delta's wire `type`, for error messages.
    pub fn name(&self) -> &'static str {
        match self {
            Delta::Text { .. } => "text_delta",
            Delta::Thinking { .. } => "thinking_delta",
            Delta::Signature { .. } => "signature_delta",
            Delta::InputJson { .. } => "input_json_delta",
            Delta::Other => "delta",
        }
    }
}

/// `message_delta`'s `delta`: why the message stopped.
#[derive(Debug, Deserialize)]
pub struct MessageDelta {
    #[serde(default)]
    pub stop_reason: Option<String>,
}

/// The `error` of an `error` event (and of an error response body).
#[derive(Debug, Deserialize)]
pub struct ApiError {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}
