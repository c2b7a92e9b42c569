//! A tool as a model is offered it: a leaf, shared by the registry, MCP servers' tools and
//! a client's declared tools.

use serde::Serialize;
use serde_json::Value;

/// A tool as offered to a model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}
