//! The vocabulary of `request_input`: what the agent may ask a person for.
//!
//! The server turns an [`InputRequest`] into an AG-UI interrupt; the page reads the
//! interrupt's `metadata` back into one to pick the control it shows.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The control a question needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    /// Free text; answered with `{"text": "…"}`.
    Text,
    /// One of `choices`; answered with `{"choice": "…"}`.
    Choice,
    /// Approve or reject; answered with `{"approved": bool, "comment"?: "…"}`.
    Confirm,
    /// A small form described by a JSON Schema object; answered with an object matching it.
    Form,
}

/// The arguments of the `request_input` tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InputRequest {
    /// The question, shown to the person.
    pub prompt: String,
    /// Which control to show.
    pub kind: InputKind,
    /// The options of a `choice`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<String>>,
    /// The JSON Schema (an object with `properties`) of a `form`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// Seconds after which the question expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
}
