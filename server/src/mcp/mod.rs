//! MCP servers as tools: every server of the `--mcp-config` file (stdio or streamable
//! HTTP, through the official Rust SDK, `rmcp`) offers its tools to the model as
//! `server__tool`, with the server's JSON Schemas (validated like a built-in tool's).
//!
//! Each server has a supervisor ([`connection`]) that starts it, lists its tools, follows
//! `notifications/tools/list_changed`, and restarts it with backoff when it fails to start
//! or dies. A call to a server that is down, that dies during the call or that does not
//! answer within its timeout comes back as an error result (the page shows it on the
//! call's card, and the run records a [`McpTools::notice`] the page shows as a line of
//! its own); a run never waits on a server beyond that timeout, and a server that timed
//! out or broke during a call is hung up on and started again with backoff. Annotations decide
//! the policy ([`tools`]): `readOnlyHint`/`destructiveHint` whether a call waits for a
//! person's approval, `idempotentHint` whether crash recovery may run it again.

mod call;
pub mod config;
mod connection;
pub mod environment;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use crate::lifecycle::Lifecycle;
use rmcp::model::CallToolRequestParams;
use rmcp::ServiceError;
use serde_json::Value;

pub use config::{McpConfigError, ServerConfig};
use connection::{Server, Status};
pub use tools::McpTool;

use crate::agent::progress::ProgressSender;
use crate::agent::tools::ToolSpec;

/// How long startup waits for the servers' first connection, so runs that continue after
/// a restart find their tools (the servers connect in parallel).
const STARTUP_WAIT: Duration = Duration::from_secs(20);

/// The configured MCP servers and their tools.
#[derive(Clone, Default)]
pub struct McpTools {
    servers: Vec<Arc<Server>>,
}

impl McpTools {
    /// Starts a supervisor per server and waits (up to [`STARTUP_WAIT`]) until each has
    /// connected or failed once. Supervisors end once the process's runs have stopped
    /// (a run's tool call in flight at a stop finishes first).
    pub async fn start(configs: Vec<ServerConfig>, lifecycle: &Lifecycle) -> Self {
        let servers: Vec<Arc<Server>> = configs
            .into_iter()
            .map(|config| connection::spawn(config, lifecycle))
            .collect();
        let first = servers
            .iter()
            .map(|server| server.first_attempt(STARTUP_WAIT));
        futures_util::future::join_all(first).await;
        Self { servers }
    }

    /// The tools of every connected server.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs = Vec::new();
        for server in &self.servers {
            if let Status::Connected { tools, .. } = server.status() {
                specs.extend(tools.iter().map(|tool| tool.spec.clone()));
            }
        }
        specs
    }

    /// A connected server's tool by the name the model calls it.
    pub fn tool(&self, name: &str) -> Option<Arc<McpTool>> {
        let (server, _) = self.server_of(name)?;
        match server.status() {
            Status::Connected { tools, .. } => tools.iter().find(|t| t.name == name).cloned(),
            _ => None,
        }
    }

    /// Whether a call of `name` waits for a person's approval; a tool of a configured
    /// server that is not listed right now is treated as unknown, which does.
    pub fn needs_approval(&self, name: &str) -> Option<bool> {
        match (self.tool(name), self.server_of(name)) {
            (Some(tool), _) => Some(tool.needs_approval),
            (None, Some(_)) => Some(true),
            (None, None) => None,
        }
    }

    /// Whether an interrupted call of `name` may run again; a tool of a configured server
    /// that is not listed right now may not.
    pub fn idempotent(&self, name: &str) -> Option<bool> {
        match (self.tool(name), self.server_of(name)) {
            (Some(tool), _) => Some(tool.idempotent),
            (None, Some(_)) => Some(false),
            (None, None) => None,
        }
    }

    /// Where the structured output of `name` goes in the shared state, if configured.
    pub fn state_path(&self, name: &str) -> Option<String> {
        self.tool(name)?.state.clone()
    }

    /// Whether `name` belongs to a configured server (listed or not).
    pub fn owns(&self, name: &str) -> bool {
        self.server_of(name).is_some()
    }

    /// Why a name of a configured server cannot be called right now: its server is not
    /// connected, or does not list it.
    pub fn unavailable(&self, name: &str) -> String {
        let Some((server, _)) = self.server_of(name) else {
            return format!("unknown tool `{name}`");
        };
        let server_name = &server.config.name;
        match server.status() {
            Status::Connected { tools, .. } => {
                let listed: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                format!(
                    "the MCP server `{server_name}` has no tool `{name}`; it has: {}",
                    listed.join(", ")
                )
            }
            Status::Starting => {
                format!("the MCP server `{server_name}` is still starting; try again shortly")
            }
            Status::Down { reason, retry_at } => {
                let wait = retry_at.saturating_duration_since(std::time::Instant::now());
                format!(
                    "the MCP server `{server_name}` is not available ({reason}); Tandem tries again in {} s",
                    wait.as_secs().max(1)
                )
            }
        }
    }

    /// Whether `name` is one of the MCP servers' tools.
    pub fn has(&self, name: &str) -> bool {
        self.server_of(name).is_some()
    }

    /// Calls a tool on checked arguments; every failure is an `Err` for the model. The
    /// server's progress reports for the call go to `progress` (it is sent a progress
    /// token), and each one gives the call its whole timeout again.
    pub async fn call(
        &self,
        name: &str,
        arguments: Value,
        progress: Option<ProgressSender>,
    ) -> Result<Value, String> {
        let (server, _) = self
            .server_of(name)
            .ok_or_else(|| format!("unknown tool `{name}`"))?;
        let server_name = &server.config.name;
        let Status::Connected { peer, tools, .. } = server.status() else {
            return Err(self.unavailable(name));
        };
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| self.unavailable(name))?;
        let params = CallToolRequestParams::new(tool.remote_name.clone())
            .with_arguments(tools::arguments(arguments));
        let timeout = server.config.timeout;
        tracing::info!(server = %server_name, tool = %tool.remote_name, "MCP tool call sent");
        let called = call::call_tool(&peer, params, timeout, &server.progress, progress);
        match called.await {
            Err(_) => {
                let reason = format!("it did not answer a call within {} s", timeout.as_secs());
                server.hang_up(reason.clone());
                Err(format!(
                    "the MCP server `{server_name}` did not answer within {} s; Tandem restarts it",
                    timeout.as_secs()
                ))
            }
            // The server answered with an error: it is alive.
            Ok(Err(error @ ServiceError::McpError(_))) => Err(format!(
                "the MCP server `{server_name}` failed the call: {error}"
            )),
            Ok(Err(error)) => {
                server.hang_up(format!("the connection broke during a call: {error}"));
                Err(format!(
                    "the MCP server `{server_name}` went away during the call ({error}); Tandem restarts it"
                ))
            }
            Ok(Ok(result)) => tools::result_value(result),
        }
    }

    /// The notice a run records when a call of `name` found its server not connected
    /// (`CUSTOM tandem.mcp_server_unavailable`), so the page shows it; `None` while the
    /// server is connected or `name` is no MCP tool.
    pub fn notice(&self, name: &str, tool_call_id: &str) -> Option<shared::EventBody> {
        let (server, _) = self.server_of(name)?;
        let (reason, retry_at) = match server.status() {
            Status::Connected { .. } => return None,
            Status::Starting => ("it is still starting".to_string(), None),
            Status::Down { reason, retry_at } => (reason, Some(retry_at)),
        };
        let retry_in = retry_at.map(|at| {
            let wait = at.saturating_duration_since(std::time::Instant::now());
            wait.as_secs_f64().ceil() as u64
        });
        let server_name = &server.config.name;
        let message = match retry_in {
            Some(secs) => format!(
                "The MCP server `{server_name}` is down ({reason}); Tandem starts it again in {} s.",
                secs.max(1)
            ),
            None => format!("The MCP server `{server_name}` is not connected yet ({reason})."),
        };
        Some(shared::EventBody::Custom {
            name: shared::custom::MCP_SERVER_UNAVAILABLE.into(),
            value: serde_json::json!({
                "server": server_name,
                "toolCallId": tool_call_id,
                "reason": reason,
                "message": message,
            }),
        })
    }

    /// Each server's name and whether it is connected (with its tool count) or why not.
    pub fn statuses(&self) -> Vec<(String, Result<usize, String>)> {
        self.servers
            .iter()
            .map(|server| {
                let state = match server.status() {
                    Status::Connected { tools, .. } => Ok(tools.len()),
                    Status::Starting => Err("starting".to_string()),
                    Status::Down { reason, .. } => Err(reason),
                };
                (server.config.name.clone(), state)
            })
            .collect()
    }

    fn server_of<'a>(&self, name: &'a str) -> Option<(&Arc<Server>, &'a str)> {
        let (server, tool) = name.split_once("__")?;
        let found = self.servers.iter().find(|s| s.config.name == server)?;
        Some((found, tool))
    }
}
