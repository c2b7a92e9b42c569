//! The tool registry: what the model may call and how a call becomes a result.
//!
//! Arguments are validated against the tool's JSON Schema before it runs. An unknown
//! tool, bad arguments, a failure, a panic or a timeout all come back as an error
//! result (`{"error":"…"}`) for the model to read; none of them stops the run.
//! `request_input` is offered here but handled by the run loop, which pauses.

mod calculator;
mod clock;
pub mod request_input;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::{json, Value};

pub use calculator::Calculator;
pub use clock::Clock;

/// How long a tool may run before its call fails.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(30);

/// A tool as offered to a model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

/// A callable tool.
pub trait Tool: Send + Sync + 'static {
    /// Name, description and argument schema.
    fn spec(&self) -> ToolSpec;
    /// Runs the tool on validated arguments.
    fn call(&self, arguments: Value) -> BoxFuture<'static, Result<Value, String>>;
}

struct Registered {
    tool: Arc<dyn Tool>,
    validator: jsonschema::Validator,
}

/// The tools a run may use.
pub struct ToolRegistry {
    tools: BTreeMap<String, Registered>,
}

impl ToolRegistry {
    /// The built-in tools: `calculator` and `clock`.
    pub fn builtin() -> Self {
        let mut registry = Self {
            tools: BTreeMap::new(),
        };
        registry.register(Arc::new(Calculator));
        registry.register(Arc::new(Clock));
        registry
    }

    /// Adds a tool; its schema must compile.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let spec = tool.spec();
        let validator = jsonschema::validator_for(&spec.parameters)
            .unwrap_or_else(|e| panic!("tool `{}` has an invalid schema: {e}", spec.name));
        self.tools.insert(spec.name, Registered { tool, validator });
    }

    /// Every tool offered to the model, `request_input` included.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = self.tools.values().map(|r| r.tool.spec()).collect();
        specs.push(request_input::spec());
        specs
    }

    /// Runs a call and returns the result content (JSON text).
    pub async fn invoke(&self, name: &str, arguments: &str) -> String {
        match self.try_invoke(name, arguments).await {
            Ok(value) => value.to_string(),
            Err(message) => json!({ "error": message }).to_string(),
        }
    }

    async fn try_invoke(&self, name: &str, arguments: &str) -> Result<Value, String> {
        let Some(registered) = self.tools.get(name) else {
            let known: Vec<&str> = self.tools.keys().map(String::as_str).collect();
            return Err(format!(
                "unknown tool `{name}`; available: {}",
                known.join(", ")
            ));
        };
        let arguments = parse_arguments(arguments)?;
        if let Err(error) = registered.validator.validate(&arguments) {
            return Err(format!("invalid arguments for `{name}`: {error}"));
        }
        let call = registered.tool.call(arguments);
        // A separate task isolates a panicking tool: the panic becomes a JoinError.
        match tokio::time::timeout(TOOL_TIMEOUT, tokio::spawn(call)).await {
            Err(_) => Err(format!("`{name}` did not finish within {TOOL_TIMEOUT:?}")),
            Ok(Err(join)) if join.is_panic() => Err(format!("`{name}` failed unexpectedly")),
            Ok(Err(_)) => Err(format!("`{name}` was stopped")),
            Ok(Ok(result)) => result,
        }
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
        fn call(&self, _: Value) -> BoxFuture<'static, Result<Value, String>> {
            Box::pin(async { panic!("boom") })
        }
    }

    fn error_of(content: &str) -> String {
        let value: Value = serde_json::from_str(content).unwrap();
        value["error"].as_str().unwrap_or_default().to_string()
    }

    #[tokio::test]
    async fn unknown_tools_bad_arguments_and_panics_become_error_results() {
        let mut registry = ToolRegistry::builtin();
        registry.register(Arc::new(Panics));
        assert!(error_of(&registry.invoke("nope", "{}").await).contains("unknown tool"));
        assert!(error_of(&registry.invoke("calculator", "{").await).contains("not valid JSON"));
        assert!(error_of(&registry.invoke("calculator", "{\"x\":1}").await).contains("invalid"));
        assert!(error_of(&registry.invoke("panics", "{}").await).contains("unexpectedly"));
    }

    #[tokio::test]
    async fn a_good_call_returns_its_value() {
        let registry = ToolRegistry::builtin();
        let content = registry
            .invoke("calculator", r#"{"expression":"6*7"}"#)
            .await;
        assert_eq!(
            serde_json::from_str::<Value>(&content).unwrap()["result"],
            json!(42)
        );
    }
}
