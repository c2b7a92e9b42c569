//! What the agent is given, from the settings: its engine (and the secrets its settings
//! hold), the limits of a run, the models a session may pick, and its tools (built-in,
//! sandboxed, people's own, MCP servers'). [`super::Application::build_with`] assembles
//! the app from them.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::engines::{
    AnthropicEngine, BenchEngine, DemoEngine, Engine, OpenAiEngine, ScriptEngine,
};
use crate::agent::tools::schema::SchemaLimits;
use crate::agent::tools::{Tool, ToolRegistry, ToolSource, Workspaces};
use crate::agent::RunLimits;
use crate::config::{Config, ConfigError, EngineKind};
use crate::lifecycle::Lifecycle;
use crate::mcp::McpTools;

/// The engine, and the secrets its settings hold (its API key, its extra headers' values),
/// which span contents are scrubbed of.
pub(super) fn engine(
    config: &Config,
) -> anyhow::Result<(Arc<dyn Engine>, Vec<crate::domain::Secret>)> {
    let delay = Duration::from_millis(config.token_delay_ms);
    Ok(match config.engine {
        EngineKind::Demo => (Arc::new(DemoEngine::new(delay)), Vec::new()),
        EngineKind::Script => {
            let path = config.script.as_deref().ok_or(ConfigError::MissingScript)?;
            (Arc::new(ScriptEngine::load(path, delay)?), Vec::new())
        }
        EngineKind::Openai => {
            let settings = config.provider.openai()?;
            let secrets = settings.secrets();
            (Arc::new(OpenAiEngine::new(settings)?), secrets)
        }
        EngineKind::Anthropic => {
            let settings = config.provider.anthropic()?;
            let secrets = settings.secrets();
            (Arc::new(AnthropicEngine::new(settings)?), secrets)
        }
        EngineKind::Bench => (
            Arc::new(BenchEngine::new(config.bench_tokens, delay)),
            Vec::new(),
        ),
    })
}

/// What one run may amount to, from the configured limits.
pub(super) fn run_limits(config: &Config) -> RunLimits {
    let limits = &config.limits;
    RunLimits {
        max_model_calls: limits.max_model_calls,
        max_run_events: limits.max_run_events,
        max_tool_result_bytes: limits.max_tool_result_bytes as usize,
        max_message_bytes: limits.max_message_bytes as usize,
        schema: SchemaLimits {
            max_bytes: limits.max_schema_bytes as usize,
            max_depth: limits.max_schema_depth as usize,
        },
    }
}

/// The built-in tools (the sandboxed ones of the server among them) with the configured
/// approval settings, and people's own tools when they may have them; the settings that
/// name MCP tools (`server__tool`) are returned for their servers ([`mcp_tools`]).
pub(super) fn tools(config: &Config) -> anyhow::Result<ServerTools> {
    let workspaces = Arc::new(Workspaces::new(
        config.workspace_dir.clone(),
        config.limits.workspace_quota_bytes,
    ));
    let mut tools = ToolRegistry::builtin(workspaces.clone());
    let sandbox = sandbox(config)?;
    if let Some(sandbox) = &sandbox {
        for (tool, source) in sandboxed_tools(config, &tools, &workspaces, sandbox)? {
            tools.register_from(tool, source);
        }
    }
    let own = sandbox
        .filter(|_| config.sandbox.user_tools == crate::config::Toggle::On)
        .map(|sandbox| {
            let max = config.sandbox.max_tool_module_bytes as usize;
            Arc::new(crate::sandbox::UserToolbox::new(sandbox, workspaces, max))
        });
    let mut for_mcp = Vec::new();
    let required = config.require_approval.iter().map(|name| (name, true));
    let skipped = config.skip_approval.iter().map(|name| (name, false));
    for (name, needed) in required.chain(skipped) {
        let name = name.trim();
        if name.is_empty() {
            continue;
        }
        if name.contains("__") {
            for_mcp.push((name.to_string(), needed));
        } else {
            tools.set_approval(name, needed)?;
        }
    }
    Ok(ServerTools {
        registry: tools,
        for_mcp,
        own,
    })
}

/// The server's tools as configured ([`tools`]).
pub(super) struct ServerTools {
    pub registry: ToolRegistry,
    /// The approval settings that name MCP tools.
    pub for_mcp: Vec<(String, bool)>,
    /// People's own tools, unless `--user-tools off`.
    pub own: Option<Arc<crate::sandbox::UserToolbox>>,
}

/// The WebAssembly sandbox, when anything runs in it: the operator's tools
/// (`--wasm-tools`), `run_python` (`--python-wasm`) or people's own (`--user-tools on`).
fn sandbox(config: &Config) -> anyhow::Result<Option<Arc<crate::sandbox::Sandbox>>> {
    let settings = &config.sandbox;
    let used = settings.wasm_tools.is_some()
        || settings.python_wasm.is_some()
        || settings.user_tools == crate::config::Toggle::On;
    if !used {
        return Ok(None);
    }
    let limits = crate::sandbox::Limits::configured(settings);
    let cache = settings.wasm_cache_dir.clone();
    Ok(Some(crate::sandbox::Sandbox::new(limits, Some(cache))?))
}

/// The server's sandboxed tools: `run_python` (`--python-wasm`) and the operator's
/// WebAssembly tools (`--wasm-tools`), none without those flags. Each module is checked
/// and compiled (or read back from the cache) now: one that cannot be a tool stops the
/// start.
fn sandboxed_tools(
    config: &Config,
    registry: &ToolRegistry,
    workspaces: &Arc<Workspaces>,
    sandbox: &Arc<crate::sandbox::Sandbox>,
) -> anyhow::Result<Vec<(Arc<dyn Tool>, ToolSource)>> {
    use crate::config::PythonFiles;
    use crate::sandbox::{manifest::FileAccess, RunPython};
    let settings = &config.sandbox;
    let mut tools: Vec<(Arc<dyn Tool>, ToolSource)> = Vec::new();
    if let Some(interpreter) = &settings.python_wasm {
        let files = match settings.python_files {
            PythonFiles::None => FileAccess::None,
            PythonFiles::Read => FileAccess::Read,
            PythonFiles::Write => FileAccess::Write,
        };
        let python = RunPython::load(interpreter, files, sandbox.clone(), workspaces.clone())?;
        tracing::info!(interpreter = %interpreter.display(), "run_python ready");
        tools.push((Arc::new(python), ToolSource::Builtin));
    }
    if let Some(folder) = &settings.wasm_tools {
        let taken = |name: &str| registry.has(name) || name == crate::sandbox::python::NAME;
        let loaded = crate::sandbox::folder::load(folder, sandbox, workspaces, taken)?;
        tracing::info!(tools = loaded.len(), folder = %folder.display(), "WebAssembly tools ready");
        tools.extend(
            loaded
                .into_iter()
                .map(|tool| (Arc::new(tool) as Arc<dyn Tool>, ToolSource::Wasm)),
        );
    }
    Ok(tools)
}

/// The models sessions may pick: the engine's own, then `--models` (each once).
pub(super) fn models(config: &Config, default: &str) -> Vec<String> {
    let mut models = vec![default.to_string()];
    for model in config.models.iter().map(|m| m.trim()) {
        if !model.is_empty() && !models.iter().any(|m| m == model) {
            models.push(model.to_string());
        }
    }
    models
}

/// The MCP servers of `--mcp-config`, with the approval settings that name their tools,
/// started (none without it).
pub(super) async fn mcp_tools(
    config: &Config,
    approval_flags: &[(String, bool)],
    lifecycle: &Lifecycle,
) -> anyhow::Result<McpTools> {
    let mut servers = match &config.mcp_config {
        Some(path) => crate::mcp::config::load(path)?,
        None => Vec::new(),
    };
    crate::mcp::config::apply_approval_flags(&mut servers, approval_flags)?;
    if servers.is_empty() {
        return Ok(McpTools::default());
    }
    crate::agent::engines::http::install_crypto_provider();
    Ok(McpTools::start(servers, lifecycle).await)
}
