//! An MCP server's tool as Tandem offers it: its name (`server__tool`), its JSON Schema
//! (compiled once, so arguments are validated like a built-in tool's), the approval and
//! crash-recovery policy its annotations and the config decide, and how a call's result
//! becomes the tool result the model reads.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool};
use serde_json::{json, Map, Value};

use super::config::{Approval, ServerConfig};
use crate::agent::tools::ToolSpec;

/// Longest name a model provider accepts for a tool.
const MAX_NAME: usize = 64;

/// One tool of a connected server.
pub struct McpTool {
    /// The name the model calls it by: `server__tool`.
    pub name: String,
    /// The name the server knows it by.
    pub remote_name: String,
    pub spec: ToolSpec,
    pub validator: Arc<jsonschema::Validator>,
    pub needs_approval: bool,
    pub idempotent: bool,
    /// Where its structured output goes in the shared state (`tools.<name>.state`).
    pub state: Option<String>,
}

impl McpTool {
    /// The tool as the server listed it; `None` (with a warning) if its name cannot be
    /// offered or its schema does not compile.
    pub fn from_listed(server: &ServerConfig, tool: Tool) -> Option<Self> {
        let remote_name = tool.name.to_string();
        let name = exposed_name(&server.name, &remote_name);
        if name.len() > MAX_NAME {
            tracing::warn!(server = %server.name, tool = %remote_name, "tool name too long to offer; skipped");
            return None;
        }
        let parameters = Value::Object((*tool.input_schema).clone());
        let validator = match jsonschema::validator_for(&parameters) {
            Ok(validator) => Arc::new(validator),
            Err(error) => {
                tracing::warn!(server = %server.name, tool = %remote_name, %error, "tool schema does not compile; skipped");
                return None;
            }
        };
        let hints = tool.annotations.as_ref();
        let read_only = hints.and_then(|h| h.read_only_hint) == Some(true);
        let destructive = hints.and_then(|h| h.destructive_hint);
        let overrides = server.tools.get(&remote_name).cloned().unwrap_or_default();
        let approval = overrides.approval.unwrap_or(server.approval);
        let by_annotations = match approval {
            Approval::Always => true,
            Approval::Never => false,
            // MCP's own default: a tool that is not read-only may be destructive.
            Approval::Auto => !read_only && destructive != Some(false),
        };
        let flagged = server.approval_flags.get(&name).copied();
        let needs_approval = flagged.unwrap_or(by_annotations);
        let idempotent = overrides
            .idempotent
            .unwrap_or(read_only || hints.and_then(|h| h.idempotent_hint) == Some(true));
        let description = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .unwrap_or_default();
        Some(Self {
            spec: ToolSpec {
                name: name.clone(),
                description: format!("{description} (from the MCP server `{}`)", server.name),
                parameters,
            },
            name,
            remote_name,
            validator,
            needs_approval,
            idempotent,
            state: overrides.state,
        })
    }
}

/// `server__tool`, with characters providers refuse in a tool name replaced by `_`.
pub fn exposed_name(server: &str, tool: &str) -> String {
    let tool: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{server}__{tool}")
}

/// A call's arguments as MCP wants them: an object.
pub fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A call's result as the model reads it: the text blocks joined (`text`), the
/// structured result if the server gave one, other blocks in `otherContent` (images and
/// embedded resources with their bytes, which the run keeps as attachments and replaces by
/// their ids; audio and links described). A result the server marks as an error is an
/// error result.
pub fn result_value(result: CallToolResult) -> Result<Value, String> {
    let mut texts = Vec::new();
    let mut others = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(text) => texts.push(text.text.as_str()),
            // Images and embedded resources carry their bytes on to the run, which keeps
            // them as attachments (`agent::attached::from_tools`) before the result is logged.
            ContentBlock::Image(image) => others.push(json!({
                "type": "image", "mimeType": image.mime_type, "data": image.data,
            })),
            ContentBlock::Audio(audio) => {
                others.push(json!({"type": "audio", "mimeType": audio.mime_type}))
            }
            ContentBlock::Resource(embedded) => others.push(match &embedded.resource {
                ResourceContents::TextResourceContents {
                    uri, mime_type, text, ..
                } => json!({"type": "resource", "uri": uri,
                            "mimeType": mime_type.as_deref().unwrap_or("text/plain"), "text": text}),
                ResourceContents::BlobResourceContents {
                    uri, mime_type, blob, ..
                } => json!({"type": "resource", "uri": uri,
                            "mimeType": mime_type.as_deref().unwrap_or("application/octet-stream"),
                            "data": blob}),
                _ => json!({"type": "resource"}),
            }),
            ContentBlock::ResourceLink(link) => {
                others.push(json!({"type": "resource_link", "uri": link.uri}))
            }
            _ => others.push(json!({"type": "other"})),
        }
    }
    let text = texts.join("\n");
    if result.is_error == Some(true) {
        return Err(if text.is_empty() {
            "the tool reported an error".into()
        } else {
            text
        });
    }
    let mut value = json!({ "text": text });
    if let Some(structured) = result.structured_content {
        value["structuredContent"] = structured;
    }
    if !others.is_empty() {
        value["otherContent"] = Value::Array(others);
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use rmcp::model::ToolAnnotations;

    use super::*;
    use crate::mcp::config::{ToolPolicy, Transport};

    fn server(approval: Approval, overrides: &[(&str, ToolPolicy)]) -> ServerConfig {
        ServerConfig {
            name: "srv".into(),
            transport: Transport::Stdio {
                command: "x".into(),
                args: Vec::new(),
                env: BTreeMap::new(),
            },
            approval,
            timeout: Duration::from_secs(1),
            tools: overrides
                .iter()
                .map(|(name, policy)| (name.to_string(), policy.clone()))
                .collect(),
            approval_flags: BTreeMap::new(),
        }
    }

    fn tool(name: &str, hints: Option<(Option<bool>, Option<bool>, Option<bool>)>) -> Tool {
        let schema = json!({"type": "object"});
        let mut tool = Tool::new(
            name.to_string(),
            "does things",
            Arc::new(schema.as_object().unwrap().clone()),
        );
        if let Some((read_only, destructive, idempotent)) = hints {
            let mut annotations = ToolAnnotations::default();
            annotations.read_only_hint = read_only;
            annotations.destructive_hint = destructive;
            annotations.idempotent_hint = idempotent;
            tool.annotations = Some(annotations);
        }
        tool
    }

    #[test]
    fn annotations_decide_approval_and_recovery_unless_the_config_says_otherwise() {
        let auto = server(Approval::Auto, &[]);
        let reader =
            McpTool::from_listed(&auto, tool("read", Some((Some(true), None, None)))).unwrap();
        assert_eq!((reader.needs_approval, reader.idempotent), (false, true));
        let adder =
            McpTool::from_listed(&auto, tool("add", Some((None, Some(false), None)))).unwrap();
        assert_eq!((adder.needs_approval, adder.idempotent), (false, false));
        let unknown = McpTool::from_listed(&auto, tool("mystery", None)).unwrap();
        assert_eq!((unknown.needs_approval, unknown.idempotent), (true, false));
        let wiper = McpTool::from_listed(&auto, tool("wipe", Some((None, Some(true), Some(true)))))
            .unwrap();
        assert_eq!((wiper.needs_approval, wiper.idempotent), (true, true));

        let policy = ToolPolicy {
            approval: Some(Approval::Never),
            idempotent: Some(true),
            state: None,
        };
        let trusted = server(Approval::Always, &[("mystery", policy)]);
        let mystery = McpTool::from_listed(&trusted, tool("mystery", None)).unwrap();
        assert_eq!((mystery.needs_approval, mystery.idempotent), (false, true));
        let other =
            McpTool::from_listed(&trusted, tool("read", Some((Some(true), None, None)))).unwrap();
        assert!(
            other.needs_approval,
            "the server's `always` covers the rest"
        );
        assert_eq!(other.name, "srv__read");

        let mut flagged = server(Approval::Always, &[]);
        let flags = [
            ("srv__read".to_string(), false),
            ("srv__add".to_string(), true),
        ];
        crate::mcp::config::apply_approval_flags(std::slice::from_mut(&mut flagged), &flags)
            .unwrap();
        let read = McpTool::from_listed(&flagged, tool("read", None)).unwrap();
        assert!(!read.needs_approval, "--skip-approval wins over the file");
        let auto_read = server(Approval::Auto, &[]);
        let mut auto_flagged = auto_read.clone();
        let add = [("srv__add".to_string(), true)];
        crate::mcp::config::apply_approval_flags(std::slice::from_mut(&mut auto_flagged), &add)
            .unwrap();
        let add = McpTool::from_listed(&auto_flagged, tool("add", Some((None, Some(false), None))));
        assert!(
            add.unwrap().needs_approval,
            "--require-approval wins over the annotations"
        );
        let unknown = [("nope__x".to_string(), true)];
        let error =
            crate::mcp::config::apply_approval_flags(std::slice::from_mut(&mut flagged), &unknown)
                .unwrap_err();
        assert!(
            error.to_string().contains("the servers are: srv"),
            "{error}"
        );
    }

    #[test]
    fn names_are_made_safe_for_providers() {
        assert_eq!(exposed_name("files", "read.file v2"), "files__read_file_v2");
        let auto = server(Approval::Auto, &[]);
        assert!(McpTool::from_listed(&auto, tool(&"x".repeat(80), None)).is_none());
    }

    #[test]
    fn results_keep_text_and_structure_and_errors_stay_errors() {
        let ok = CallToolResult::success(vec![ContentBlock::text("The sum is 5.")]);
        assert_eq!(result_value(ok).unwrap(), json!({"text": "The sum is 5."}));
        let failed = CallToolResult::error(vec![ContentBlock::text("no such file")]);
        assert_eq!(result_value(failed).unwrap_err(), "no such file");
    }
}
