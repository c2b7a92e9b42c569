//! The tools a person's model may call, as `GET /api/tools` lists them, and a person's own
//! WebAssembly tools (`PUT`/`DELETE /api/tools/{name}`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ToolSource {
    /// Compiled into the server (`run_python` among them).
    Builtin,
    /// A server of `--mcp-config`.
    Mcp,
    /// A WebAssembly module of the operator's folder (`--wasm-tools`).
    Wasm,
    /// The person's own WebAssembly module (`PUT /api/tools/{name}`).
    User,
}

/// One tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    pub name: String,
    pub source: ToolSource,
    /// What the model is told the tool does.
    pub description: String,
    /// The JSON Schema of its arguments.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub parameters: Value,
    /// Whether each call waits for the person's approval.
    pub approval: bool,
    /// A person's own tool: the SHA-256 of its module, in hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// A person's own tool: its module's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_bytes: Option<u64>,
    /// A person's own tool: when it was uploaded (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// `GET /api/tools`: every tool the caller's model may call, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ToolList {
    pub tools: Vec<ToolInfo>,
    /// Whether the caller may upload tools of their own (`--user-tools`).
    pub uploads: bool,
}
