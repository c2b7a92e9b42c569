//! Real MCP servers for the tests: the reference `@modelcontextprotocol/server-everything`
//! (npm) over stdio or streamable HTTP, and `tests/fixtures/mcp/notes-server.mjs` (built on
//! the official SDK) over stdio. Needs Node and the test packages (`tests/node_modules`,
//! installed by `scripts/setup.sh --test`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn everything_script() -> String {
    let path =
        repo().join("tests/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.exists(),
        "{} is missing: run scripts/setup.sh --test",
        path.display()
    );
    path.display().to_string()
}

/// The reference server over stdio, as a config entry.
pub fn everything_stdio() -> Value {
    json!({"command": "node", "args": [everything_script(), "stdio"]})
}

/// The notes fixture over stdio, as a config entry (`extra` keys merged in).
pub fn notes(extra: Value) -> Value {
    let script = repo().join("tests/fixtures/mcp/notes-server.mjs");
    let mut entry = json!({"command": "node", "args": [script.display().to_string()],
                           "env": {"NOTES_GREETING": "hello from the config"}});
    entry
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    entry
}

/// Writes an `--mcp-config` file with these servers into `dir`.
pub fn config_file(dir: &Path, servers: Value) -> PathBuf {
    let path = dir.join("mcp.json");
    std::fs::write(&path, json!({"mcpServers": servers}).to_string()).unwrap();
    path
}

/// The reference server on streamable HTTP, as a child process killed on drop.
pub struct HttpEverything {
    child: Child,
    pub url: String,
}

impl HttpEverything {
    /// Starts it on a free port and returns once it says it listens.
    pub fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new("node")
            .args([everything_script().as_str(), "streamableHttp"])
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node starts");
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let mut lines = stderr.lines();
        loop {
            let line = lines
                .next()
                .expect("the server printed its listening line")
                .unwrap();
            if line.contains("listening on port") {
                break;
            }
        }
        // Keep draining its log so it never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
