//! The tool registry: what the model may call and how a call becomes a result.
//!
//! Arguments are validated against the tool's JSON Schema before it runs. An unknown
//! tool, bad arguments, a failure, a panic or a timeout all come back as an error
//! result (`{"error":"…"}`) for the model to read; none of them stops the run.
//! `request_input` is offered here but handled by the run loop, which pauses. The
//! registry also knows which tools need a person's approval before they run.

mod append_file;
pub mod calculator;
mod clock;
pub mod read_attachment;
mod replace_file;
pub mod request_input;
pub mod schema;
mod spec;
pub mod update_state;
pub mod workspace;
pub mod workspace_usage;
mod write_file;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

pub use append_file::AppendFile;
pub use calculator::Calculator;
pub use clock::Clock;
pub use spec::ToolSpec;
pub use workspace::Workspaces;
pub use write_file::WriteFile;

use crate::agent::progress::ProgressSender;
use crate::domain::UserName;
use crate::mcp::McpTools;
pub use shared::tools::ToolSource;

/// How long a tool may run before its call fails.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(30);

/// What a call knows about who it runs for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolContext {
    /// The owner of the session: file tools work in their workspace.
    pub user: UserName,
    /// The run's session (`read_attachment` reads its attachments).
    pub session: crate::domain::SessionId,
    /// The session's owner (files a tool returns are theirs).
    pub owner: crate::domain::UserId,
}

/// What a tool's call comes to: its result, or an error the model reads.
pub type ToolCall = BoxFuture<'static, Result<Value, String>>;

/// A callable tool.
pub trait Tool: Send + Sync + 'static {
    /// Name, description and argument schema.
    fn spec(&self) -> ToolSpec;
    /// Checks what the schema cannot say (e.g. that a path stays in the workspace);
    /// runs on the model's arguments and again on a person's edits.
    fn check(&self, _arguments: &Value) -> Result<(), String> {
        Ok(())
    }
    /// Runs the tool on checked arguments.
    fn call(&self, arguments: Value, context: &ToolContext) -> ToolCall;
    /// Whether the tool changes something outside the conversation; such tools need a
    /// person's approval unless configured otherwise.
    fn changes_things(&self) -> bool {
        false
    }
    /// Whether running the same call twice is harmless. Only such calls are re-run when a
    /// crash cut them short; by default, tools that change nothing are.
    fn idempotent(&self) -> bool {
        !self.changes_things()
    }
}

struct Registered {
    tool: Arc<dyn Tool>,
    validator: jsonschema::Validator,
    source: ToolSource,
}

/// A tool as a listing shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    pub spec: ToolSpec,
    pub source: ToolSource,
    /// Whether each call waits for a person's approval.
    pub approval: bool,
}

/// The tools a run may use: the built-in ones (the sandboxed ones of the server among
/// them), those of the MCP servers, and, in a person's runs, the person's own. A clone
/// shares every tool: a person's registry is the server's with theirs added.
#[derive(Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<Registered>>,
    needs_approval: BTreeSet<String>,
    mcp: McpTools,
}

/// A tool name in an approval setting that no tool has.
#[derive(Debug, thiserror::Error)]
#[error("no tool is named `{0}`; the tools are: {1}")]
pub struct UnknownTool(pub String, pub String);

impl ToolRegistry {
    /// The built-in tools: `calculator`, `clock`, and `write_file` and `append_file`
    /// (in `workspaces`).
    pub fn builtin(workspaces: Arc<Workspaces>) -> Self {
        let mut registry = Self {
            tools: BTreeMap::new(),
            needs_approval: BTreeSet::new(),
            mcp: McpTools::default(),
        };
        registry.register(Arc::new(Calculator));
        registry.register(Arc::new(Clock));
        registry.register(Arc::new(WriteFile::new(workspaces.clone())));
        registry.register(Arc::new(AppendFile::new(workspaces)));
        registry
    }

    /// The built-in tools on a scratch workspace under the temp folder, for unit tests.
    #[cfg(test)]
    pub(crate) fn scratch() -> Self {
        let root = std::env::temp_dir().join("tandem-tool-tests");
        Self::builtin(Arc::new(Workspaces::new(root, 1 << 20)))
    }

    /// Adds the tools of the MCP servers (their lists change as servers come and go).
    pub fn with_mcp(mut self, mcp: McpTools) -> Self {
        self.mcp = mcp;
        self
    }

    /// The MCP servers' tools.
    pub fn mcp(&self) -> &McpTools {
        &self.mcp
    }

    /// Adds a tool; its schema must compile. Tools that change things need approval.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.register_from(tool, ToolSource::Builtin);
    }

    /// Adds a tool of `source`, as [`Self::register`].
    pub fn register_from(&mut self, tool: Arc<dyn Tool>, source: ToolSource) {
        let spec = tool.spec();
        let validator = jsonschema::validator_for(&spec.parameters)
            .unwrap_or_else(|e| panic!("tool `{}` has an invalid schema: {e}", spec.name));
        if tool.changes_things() {
            self.needs_approval.insert(spec.name.clone());
        }
        let registered = Registered {
            tool,
            validator,
            source,
        };
        self.tools.insert(spec.name, Arc::new(registered));
    }

    /// This registry with a person's own `tools` added (their names are no tool's of the
    /// server: uploads are refused otherwise). Each compiled schema is checked again; a
    /// tool whose schema does not compile is left out.
    pub fn with_own(&self, tools: Vec<Arc<dyn Tool>>) -> ToolRegistry {
        let mut registry = self.clone();
        for tool in tools {
            let spec = tool.spec();
            if registry.has(&spec.name) || registry.mcp.owns(&spec.name) {
                continue;
            }
            let Ok(validator) = jsonschema::validator_for(&spec.parameters) else {
                continue;
            };
            if tool.changes_things() {
                registry.needs_approval.insert(spec.name.clone());
            }
            let source = ToolSource::User;
            let registered = Registered {
                tool,
                validator,
                source,
            };
            registry.tools.insert(spec.name, Arc::new(registered));
        }
        registry
    }

    /// Makes the named tool need (or not need) a person's approval before it runs.
    pub fn set_approval(&mut self, name: &str, needed: bool) -> Result<(), UnknownTool> {
        if !self.tools.contains_key(name) {
            let known: Vec<&str> = self.tools.keys().map(String::as_str).collect();
            return Err(UnknownTool(name.into(), known.join(", ")));
        }
        if needed {
            self.needs_approval.insert(name.into());
        } else {
            self.needs_approval.remove(name);
        }
        Ok(())
    }

    /// Whether a call of `name` waits for a person's approval.
    pub fn needs_approval(&self, name: &str) -> bool {
        self.needs_approval.contains(name) || self.mcp.needs_approval(name) == Some(true)
    }

    /// Whether a call of `name` may safely run again (unknown tools may: they do nothing;
    /// a tool of an MCP server that is not listed right now may not).
    pub fn idempotent(&self, name: &str) -> bool {
        match self.tools.get(name) {
            Some(registered) => registered.tool.idempotent(),
            None => self.mcp.idempotent(name).unwrap_or(true),
        }
    }

    /// Whether a tool of the registry's own (not an MCP server's) is named `name`,
    /// `request_input` and `update_state` included.
    pub fn has(&self, name: &str) -> bool {
        self.tools.contains_key(name) || name == request_input::NAME || name == update_state::NAME
    }

    /// The spec of one tool.
    pub fn spec(&self, name: &str) -> Option<ToolSpec> {
        match self.tools.get(name) {
            Some(registered) => Some(registered.tool.spec()),
            None => self.mcp.tool(name).map(|tool| tool.spec.clone()),
        }
    }

    /// Every tool offered to the model, `request_input` and `update_state` included.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = self.tools.values().map(|r| r.tool.spec()).collect();
        specs.extend(self.mcp.specs());
        specs.push(request_input::spec());
        specs.push(update_state::spec());
        specs
    }

    /// Every tool offered to the model, with where it comes from and whether it waits for
    /// approval (`request_input` and `update_state` are built-in).
    pub fn listing(&self) -> Vec<ListedTool> {
        let mut listed: Vec<ListedTool> = self
            .tools
            .iter()
            .map(|(name, registered)| ListedTool {
                spec: registered.tool.spec(),
                source: registered.source,
                approval: self.needs_approval.contains(name),
            })
            .collect();
        listed.extend(self.mcp.specs().into_iter().map(|spec| ListedTool {
            approval: self.mcp.needs_approval(&spec.name) == Some(true),
            spec,
            source: ToolSource::Mcp,
        }));
        for spec in [request_input::spec(), update_state::spec()] {
            listed.push(ListedTool {
                spec,
                source: ToolSource::Builtin,
                approval: false,
            });
        }
        listed.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
        listed
    }

    /// Runs a call and returns the result content (JSON text).
    pub async fn invoke(&self, name: &str, arguments: &str, context: &ToolContext) -> String {
        let result = match self.check(name, arguments) {
            Ok(arguments) => self.run(name, arguments, context, None).await,
            Err(message) => Err(message),
        };
        result_content(result)
    }

    /// Parses a call's arguments and checks them against the tool's schema.
    pub fn check(&self, name: &str, arguments: &str) -> Result<Value, String> {
        let arguments = parse_arguments(arguments)?;
        self.validate(name, &arguments)?;
        Ok(arguments)
    }

    /// Checks arguments against the tool's schema and its own rules (and how deep they
    /// nest: they are logged, with an approval's question and decision).
    pub fn validate(&self, name: &str, arguments: &Value) -> Result<(), String> {
        if let Some(why) = shared::nesting::too_deep("the arguments", arguments) {
            return Err(format!("invalid arguments for `{name}`: {why}"));
        }
        if !self.tools.contains_key(name) {
            if let Some(tool) = self.mcp.tool(name) {
                return tool
                    .validator
                    .validate(arguments)
                    .map_err(|error| format!("invalid arguments for `{name}`: {error}"));
            }
            if self.mcp.owns(name) {
                return Err(self.mcp.unavailable(name));
            }
        }
        let registered = self.registered(name)?;
        if let Err(error) = registered.validator.validate(arguments) {
            return Err(format!("invalid arguments for `{name}`: {error}"));
        }
        registered
            .tool
            .check(arguments)
            .map_err(|problem| format!("invalid arguments for `{name}`: {problem}"))
    }

    fn registered(&self, name: &str) -> Result<&Arc<Registered>, String> {
        self.tools.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.tools.keys().map(String::as_str).collect();
            format!("unknown tool `{name}`; available: {}", known.join(", "))
        })
    }

    /// Runs a tool on arguments already checked; a tool that reports progress (an MCP
    /// server's) sends it to `progress`.
    pub async fn run(
        &self,
        name: &str,
        arguments: Value,
        context: &ToolContext,
        progress: Option<ProgressSender>,
    ) -> Result<Value, String> {
        if !self.tools.contains_key(name) && self.mcp.owns(name) {
            // MCP calls keep their server's own timeout.
            return self.mcp.call(name, arguments, progress).await;
        }
        let call = self.registered(name)?.tool.call(arguments, context);
        // A separate task isolates a panicking tool: the panic becomes a JoinError. It runs
        // in the run's span, so what it logs carries the session and run.
        let call = tracing::Instrument::in_current_span(call);
        match tokio::time::timeout(TOOL_TIMEOUT, tokio::spawn(call)).await {
            Err(_) => Err(format!("`{name}` did not finish within {TOOL_TIMEOUT:?}")),
            Ok(Err(join)) if join.is_panic() => Err(format!("`{name}` failed unexpectedly")),
            Ok(Err(_)) => Err(format!("`{name}` was stopped")),
            Ok(Ok(result)) => result,
        }
    }
}

/// A result kept to at most `max` bytes: a longer one becomes a JSON marker with its
/// original size and the start of its text, so the model and the page see what happened.
pub fn truncate_result(content: String, max: usize) -> String {
    if content.len() <= max {
        return content;
    }
    // Escaping can grow the preview (quotes, control characters): halve until it fits.
    let mut keep = max.saturating_sub(100).min(content.len());
    loop {
        while !content.is_char_boundary(keep) {
            keep -= 1;
        }
        let marker = json!({
            "truncated": true,
            "originalBytes": content.len(),
            "preview": &content[..keep],
        })
        .to_string();
        if marker.len() <= max || keep == 0 {
            return marker;
        }
        keep /= 2;
    }
}

/// A tool outcome as result content: the value, or `{"error": …}`.
pub fn result_content(result: Result<Value, String>) -> String {
    match result {
        Ok(value) => value.to_string(),
        Err(message) => json!({ "error": message }).to_string(),
    }
}

/// Parses a call's argument text; empty means `{}`.
pub fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(text).map_err(|e| format!("arguments are not valid JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Panics;
    impl Tool for Panics {
        fn spec(&self) -> ToolSpec {
            ToolSpec {
                name: "panics".into(),
                description: "always panics".into(),
                parameters: json!({"type": "object"}),
            }
        }
        fn call(&self, _: Value, _: &ToolContext) -> ToolCall {
            Box::pin(async { panic!("boom") })
        }
    }

    fn context() -> ToolContext {
        ToolContext {
            user: UserName::parse("tester").unwrap(),
            session: crate::domain::SessionId::generate(),
            owner: crate::domain::UserId::LOCAL,
        }
    }

    fn error_of(content: &str) -> String {
        let value: Value = serde_json::from_str(content).unwrap();
        value["error"].as_str().unwrap_or_default().to_string()
    }

    #[tokio::test]
    async fn unknown_tools_bad_arguments_and_panics_become_error_results() {
        let mut registry = ToolRegistry::scratch();
        registry.register(Arc::new(Panics));
        let c = &context();
        assert!(error_of(&registry.invoke("nope", "{}", c).await).contains("unknown tool"));
        assert!(error_of(&registry.invoke("calculator", "{", c).await).contains("not valid JSON"));
        assert!(error_of(&registry.invoke("calculator", "{\"x\":1}", c).await).contains("invalid"));
        assert!(error_of(&registry.invoke("panics", "{}", c).await).contains("unexpectedly"));
        let dotfile = registry.invoke("write_file", r#"{"path":".ssh/x","content":""}"#, c);
        assert!(error_of(&dotfile.await).contains("invalid arguments"));
        let deep = format!(r#"{{"patch":{}1{}}}"#, "[".repeat(70), "]".repeat(70));
        let deep = registry.invoke("update_state", &deep, c).await;
        assert!(error_of(&deep).contains("nests 71 levels"), "{deep}");
    }

    #[test]
    fn tools_that_change_things_need_approval_unless_configured() {
        let mut registry = ToolRegistry::scratch();
        assert!(registry.needs_approval("write_file"));
        assert!(!registry.needs_approval("calculator"));
        registry.set_approval("write_file", false).unwrap();
        registry.set_approval("calculator", true).unwrap();
        assert!(!registry.needs_approval("write_file"));
        assert!(registry.needs_approval("calculator"));
        assert!(registry.set_approval("nope", true).is_err());
    }

    #[test]
    fn long_results_are_truncated_with_a_marker_that_stays_json() {
        let short = "{\"a\":1}".to_string();
        assert_eq!(truncate_result(short.clone(), 1000), short);
        let long = json!({"text": "ü\"".repeat(5000)}).to_string();
        let cut = truncate_result(long.clone(), 1000);
        assert!(cut.len() <= 1000, "{}", cut.len());
        let marker: Value = serde_json::from_str(&cut).unwrap();
        assert_eq!(marker["truncated"], true);
        assert_eq!(marker["originalBytes"], long.len());
        assert!(long.starts_with(marker["preview"].as_str().unwrap()));
    }

    #[tokio::test]
    async fn a_good_call_returns_its_value() {
        let registry = ToolRegistry::scratch();
        let content = registry
            .invoke("calculator", r#"{"expression":"6*7"}"#, &context())
            .await;
        assert_eq!(
            serde_json::from_str::<Value>(&content).unwrap()["result"],
            json!(42)
        );
    }
}
