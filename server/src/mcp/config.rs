//! The MCP servers file (`--mcp-config`): the `{"mcpServers": {name: …}}` shape MCP clients
//! share, with Tandem's optional policy keys beside each server's own.
//!
//! ```json
//! {"mcpServers": {
//!   "files": {"command": "npx", "args": ["-y", "some-mcp-server"], "env": {"ROOT": "/data"}},
//!   "search": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer …"},
//!              "approval": "never", "timeoutSecs": 120,
//!              "tools": {"purge_index": {"approval": "always", "idempotent": false}}}
//! }}
//! ```
//! `approval` is `auto` (the default: from the tool's annotations), `always` or `never`;
//! per tool, `approval` and `idempotent` override what the annotations say.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

/// Longest a call may take unless a server sets `timeoutSecs`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Why the file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum McpConfigError {
    #[error("cannot read the MCP servers file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the MCP servers file {path} is not valid: {message}")]
    Invalid { path: String, message: String },
}

/// Whether calls of a server's (or a tool's) tools wait for a person's approval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    /// From the tool's annotations: read-only or non-destructive tools run at once,
    /// destructive or unannotated ones wait.
    #[default]
    Auto,
    Always,
    Never,
}

/// One tool's overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolPolicy {
    #[serde(default)]
    pub approval: Option<Approval>,
    /// Whether crash recovery may run an interrupted call again.
    #[serde(default)]
    pub idempotent: Option<bool>,
    /// Where in the session's shared state the tool's structured output (its result's
    /// `structuredContent`) goes: a JSON Pointer (`/weather`), written with the result.
    #[serde(default)]
    pub state: Option<String>,
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP over stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// MCP's streamable HTTP transport.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The name its tools are offered under (`name__tool`).
    pub name: String,
    pub transport: Transport,
    pub approval: Approval,
    pub timeout: Duration,
    pub tools: BTreeMap<String, ToolPolicy>,
    /// Whether a tool needs approval, by its offered name (`server__tool`), as
    /// `--require-approval`/`--skip-approval` say; wins over `approval` and `tools`.
    pub approval_flags: BTreeMap<String, bool>,
}

/// A name in `--require-approval`/`--skip-approval` of the `server__tool` shape whose
/// server is not configured.
#[derive(Debug, thiserror::Error)]
#[error("`{name}` names no configured MCP server's tool (tools of MCP servers are `server__tool`); the servers are: {servers}")]
pub struct UnknownServer {
    pub name: String,
    pub servers: String,
}

/// Applies the approval flags that name MCP tools (`server__tool`) to their servers'
/// configs. A tool the server does not list (yet) is accepted: lists change.
pub fn apply_approval_flags(
    servers: &mut [ServerConfig],
    flags: &[(String, bool)],
) -> Result<(), UnknownServer> {
    for (name, needed) in flags {
        let prefix = name.split_once("__").map_or("", |(server, _)| server);
        let Some(server) = servers.iter_mut().find(|s| s.name == prefix) else {
            let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
            return Err(UnknownServer {
                name: name.clone(),
                servers: if names.is_empty() {
                    "none (no --mcp-config)".into()
                } else {
                    names.join(", ")
                },
            });
        };
        server.approval_flags.insert(name.clone(), *needed);
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct File {
    mcp_servers: BTreeMap<String, Entry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Entry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Some clients write the transport's name; it is read from `command`/`url`.
    #[serde(default, rename = "type")]
    _kind: Option<String>,
    #[serde(default)]
    approval: Approval,
    timeout_secs: Option<u64>,
    #[serde(default)]
    tools: BTreeMap<String, ToolPolicy>,
}

/// Reads and checks the file.
pub fn load(path: &Path) -> Result<Vec<ServerConfig>, McpConfigError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| McpConfigError::Read {
        path: shown.clone(),
        source,
    })?;
    parse(&text).map_err(|message| McpConfigError::Invalid {
        path: shown,
        message,
    })
}

/// Parses the file's text.
pub fn parse(text: &str) -> Result<Vec<ServerConfig>, String> {
    let file: File = serde_json::from_str(text).map_err(|e| e.to_string())?;
    file.mcp_servers
        .into_iter()
        .map(|(name, entry)| server(name, entry))
        .collect()
}

fn server(name: String, entry: Entry) -> Result<ServerConfig, String> {
    let name_ok = !name.is_empty()
        && name.len() <= 32
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !name.contains("__");
    if !name_ok {
        return Err(format!(
            "server name `{name}` must be 1 to 32 letters, digits or `-` (its tools are offered as `{name}__tool`)"
        ));
    }
    let transport = match (entry.command, entry.url) {
        (Some(command), None) if !command.trim().is_empty() => Transport::Stdio {
            command,
            args: entry.args,
            env: entry.env,
        },
        (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {
            Transport::Http {
                url,
                headers: entry.headers,
            }
        }
        (None, Some(url)) => return Err(format!("server `{name}`: `{url}` is not an http(s) URL")),
        _ => {
            return Err(format!(
                "server `{name}` needs either `command` (stdio) or `url` (streamable HTTP)"
            ))
        }
    };
    for (tool, policy) in &entry.tools {
        match policy.state.as_deref() {
            Some(pointer) if !shared::state::is_member_pointer(pointer) => {
                return Err(format!(
                    "server `{name}`, tool `{tool}`: `state` must be a JSON Pointer to a member of the shared state, such as `/weather`, not `{pointer}`"
                ))
            }
            _ => {}
        }
    }
    let timeout = match entry.timeout_secs {
        Some(0) => return Err(format!("server `{name}`: timeoutSecs must be at least 1")),
        Some(seconds) => Duration::from_secs(seconds),
        None => DEFAULT_TIMEOUT,
    };
    Ok(ServerConfig {
        name,
        transport,
        approval: entry.approval,
        timeout,
        tools: entry.tools,
        approval_flags: BTreeMap::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_s_state_is_a_pointer_to_a_member() {
        let with = |pointer: &str| {
            parse(&format!(
                r#"{{"mcpServers": {{"w": {{"command": "x", "tools": {{"get": {{"state": "{pointer}"}}}}}}}}}}"#
            ))
        };
        assert_eq!(
            with("/weather").unwrap()[0].tools["get"].state.as_deref(),
            Some("/weather")
        );
        assert!(with("/a/b~1c").is_ok());
        for wrong in ["weather", "", "/", "/a~2"] {
            let error = with(wrong).unwrap_err();
            assert!(error.contains("must be a JSON Pointer"), "{wrong}: {error}");
        }
    }

    #[test]
    fn the_shared_shape_parses_with_tandems_policy_keys() {
        let servers = parse(
            r#"{"mcpServers": {
                "files": {"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}},
                "search": {"url": "http://127.0.0.1:3001/mcp", "headers": {"X-Key": "k"},
                           "approval": "never", "timeoutSecs": 5,
                           "tools": {"purge": {"approval": "always", "idempotent": false}}}
            }}"#,
        )
        .unwrap();
        assert_eq!(servers.len(), 2);
        assert!(
            matches!(&servers[0].transport, Transport::Stdio { command, .. } if command == "npx")
        );
        assert_eq!(servers[0].approval, Approval::Auto);
        assert_eq!(servers[1].timeout, Duration::from_secs(5));
        assert_eq!(servers[1].tools["purge"].approval, Some(Approval::Always));
    }

    #[test]
    fn mistakes_say_what_to_fix() {
        for (text, expected) in [
            (
                r#"{"mcpServers": {"a__b": {"command": "x"}}}"#,
                "server name",
            ),
            (r#"{"mcpServers": {"a": {}}}"#, "either `command`"),
            (
                r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#,
                "either",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "ftp://h"}}}"#,
                "not an http",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "approval": "maybe"}}}"#,
                "unknown variant",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "timeoutSecs": 0}}}"#,
                "at least 1",
            ),
            (r#"{"servers": {}}"#, "mcpServers"),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
