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
        Self::start_on(port)
    }

    /// Starts it on `port` (a server killed before can be started again where it was).
    pub fn start_on(port: u16) -> Self {
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

impl HttpEverything {
    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.url
            .trim_end_matches("/mcp")
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("the URL names a port")
    }

    /// Kills it (SIGKILL), as a crash would, and waits until it is gone.
    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

/// The ids of the processes whose parent is `parent` and whose command line holds `marker`
/// (read from `/proc`).
pub fn children_of(parent: u32, marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `pid (comm) state ppid …`: the name may hold spaces, so read after its `)`.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if ppid == Some(parent) && String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(pid);
        }
    }
    found
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
