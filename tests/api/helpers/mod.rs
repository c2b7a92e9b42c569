//! `spawn_app()` and the clients tests use: REST via reqwest, sockets via tungstenite.

mod agui_rules;
pub mod child;
mod database;
pub mod list_stream;
pub mod mcp;
pub mod otlp;
pub mod provider;
pub mod socket;

use std::path::{Path, PathBuf};

use clap::Parser;
use serde_json::{json, Value};
use shared::{Event, EventBody};
use tandem::{Application, Config};

pub use agui_rules::assert_valid_session;
pub use database::{
    add_users, count_in_database, fresh_database, fresh_postgres, on_postgres, TestDir,
};
pub use socket::Socket;

/// A running app and what a test needs to talk to it.
pub struct TestApp {
    pub address: String,
    /// A client that sends the user's token, if the app has users.
    pub http: reqwest::Client,
    /// The API token this client acts with (`--auth token`).
    pub token: Option<String>,
    /// Set when the app runs in-process.
    pub handle: Option<actix_web::dev::ServerHandle>,
    _dir: Option<TestDir>,
}

/// Per-user limits high enough that only the tests of limits meet them (later flags win).
pub const UNLIMITED: &[&str] = &[
    "--tool-uploads-per-minute",
    "1000000",
    "--sessions-per-minute",
    "1000000",
    "--messages-per-minute",
    "1000000",
    "--sockets-per-user",
    "100000",
    "--max-concurrent-runs",
    "100000",
    "--max-queued-runs",
    "100000",
    "--shares-per-minute",
    "1000000",
    "--max-shares-per-session",
    "100000",
    "--viewer-sockets-per-session",
    "100000",
    "--viewer-sockets-per-owner",
    "100000",
];

/// Run leases of a second, so that on PostgreSQL a restarted app (a new instance) takes
/// the runs of the one before over within a second, not ten (later flags win).
pub const SHORT_LEASE: &[&str] = &["--run-lease-ms", "1000"];

/// Builds the config tests use: script engine, no pacing, one worker.
pub fn test_config(database_url: &str, script: &Path, extra: &[&str]) -> Config {
    let workspace = script.with_extension("workspace");
    let wasm_cache = script.with_extension("wasm-cache");
    let mut args = vec![
        "tandem",
        "--bind",
        "127.0.0.1:0",
        "--database-url",
        database_url,
        "--engine",
        "script",
        "--script",
        script.to_str().unwrap(),
        "--web-dir",
        "/nonexistent",
        "--workers",
        "1",
        "--workspace-dir",
        workspace.to_str().unwrap(),
        "--wasm-cache-dir",
        wasm_cache.to_str().unwrap(),
    ];
    if !extra.contains(&"--token-delay-ms") {
        args.extend_from_slice(&["--token-delay-ms", "0"]);
    }
    // Tests drive hundreds of sessions from one user; the limit tests set their own.
    args.extend_from_slice(UNLIMITED);
    args.extend_from_slice(SHORT_LEASE);
    args.extend_from_slice(extra);
    Config::parse_from(args)
}

/// A file holding `key`, for `--openai-api-key-file` / `--anthropic-api-key-file` (keys
/// are never flags). The files live in one folder for the whole test process.
pub fn key_file(key: &str) -> String {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap());
    let path = dir
        .path()
        .join(format!("key-{}", uuid::Uuid::new_v4().simple()));
    std::fs::write(&path, key).unwrap();
    path.display().to_string()
}

/// A scripted tool call of `name` with `arguments` (a `toolCalls` entry).
pub fn tool_call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

/// Each tool result of `events`, in call order, parsed.
pub fn tool_results(events: &[(u64, Event)]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|(_, event)| match &event.body {
            EventBody::ToolCallResult { content, .. } => {
                Some(serde_json::from_str(content).unwrap())
            }
            _ => None,
        })
        .collect()
}

/// The values of a log's `CUSTOM` events named `name`, in order.
pub fn customs(log: &[(u64, Event)], name: &str) -> Vec<Value> {
    log.iter()
        .filter_map(|(_, event)| match &event.body {
            EventBody::Custom { name: named, value } if named == name => Some(value.clone()),
            _ => None,
        })
        .collect()
}

/// The text the assistant streamed in `events`, its pieces joined.
pub fn streamed_text(events: &[(u64, Event)]) -> String {
    events
        .iter()
        .filter_map(|(_, event)| match &event.body {
            EventBody::TextMessageContent { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

/// The workspace of the user `local` for the app of `script`, planted as the sandbox's
/// defences are tested: `in.txt` inside, `secret.txt` beside the folder (`..`), and
/// `out.txt`, a symbolic link to `outside.txt` in `dir`. Returns the folder and that file.
pub fn planted_workspace(dir: &Path, script: &Path) -> (PathBuf, PathBuf) {
    let workspace = script.with_extension("workspace").join("local");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("in.txt"), "inside").unwrap();
    std::fs::write(workspace.parent().unwrap().join("secret.txt"), "outside").unwrap();
    let outside = dir.join("outside.txt");
    std::fs::write(&outside, "outside").unwrap();
    std::os::unix::fs::symlink(&outside, workspace.join("out.txt")).unwrap();
    (workspace, outside)
}

/// Writes a script file with these turns.
pub fn write_script(dir: &Path, turns: Value) -> PathBuf {
    let path = dir.join(format!("script-{}.json", uuid::Uuid::new_v4().simple()));
    std::fs::write(&path, json!({ "turns": turns }).to_string()).unwrap();
    path
}

/// Starts the app on a fresh database with a script of `turns`.
pub async fn spawn_app(turns: Value) -> TestApp {
    spawn_app_with(turns, &[]).await
}

/// Like [`spawn_app`], with extra flags (e.g. a token delay).
pub async fn spawn_app_with(turns: Value, extra: &[&str]) -> TestApp {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), turns);
    let mut app = start(test_config(&url, &script, extra)).await;
    app._dir = Some(dir);
    app
}

/// Starts the app with `--auth token` on a fresh database and creates users with these
/// names; returns a client for each (in order), and the first one's app keeps it alive.
pub async fn spawn_app_with_users(turns: Value, extra: &[&str], names: &[&str]) -> Vec<TestApp> {
    let (dir, url) = fresh_database();
    let script = write_script(dir.path(), turns);
    let flags = [&["--auth", "token"], extra].concat();
    let mut app = start(test_config(&url, &script, &flags)).await;
    let tokens = add_users(&url, names).await;
    app._dir = Some(dir);
    let mut clients: Vec<TestApp> = tokens.iter().skip(1).map(|t| app.as_user(t)).collect();
    app.http = bearer_client(&tokens[0]);
    app.token = Some(tokens[0].clone());
    clients.insert(0, app);
    clients
}

fn bearer_client(token: &str) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    let value = format!("Bearer {token}").parse().unwrap();
    headers.insert(reqwest::header::AUTHORIZATION, value);
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap()
}

/// Starts the app with `config` (same database file = a restart).
pub async fn start(config: Config) -> TestApp {
    if std::env::var_os("TEST_LOG").is_some() {
        tandem::telemetry::init("debug");
    }
    let app = Application::build(config).await.expect("the app builds");
    let address = app.address().to_string();
    let handle = app.handle();
    tokio::spawn(app.run_until_stopped());
    TestApp {
        address,
        http: reqwest::Client::new(),
        token: None,
        handle: Some(handle),
        _dir: None,
    }
}

impl TestApp {
    /// A client for an app running elsewhere (e.g. the real binary).
    pub fn remote(address: &str) -> TestApp {
        TestApp {
            address: address.into(),
            http: reqwest::Client::new(),
            token: None,
            handle: None,
            _dir: None,
        }
    }

    /// A client of the same app acting with `token`.
    pub fn as_user(&self, token: &str) -> TestApp {
        TestApp {
            address: self.address.clone(),
            http: bearer_client(token),
            token: Some(token.to_string()),
            handle: None,
            _dir: None,
        }
    }

    /// A client of the same app that sends no credentials.
    pub fn anonymous(&self) -> TestApp {
        TestApp::remote(&self.address)
    }

    /// The `Authorization` header this client sends, if any.
    pub fn auth_header(&self) -> Option<(&'static str, String)> {
        self.token
            .as_ref()
            .map(|token| ("authorization", format!("Bearer {token}")))
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.address, path)
    }

    /// Creates a session and returns its id.
    pub async fn create_session(&self) -> String {
        let response = self
            .http
            .post(self.url("/api/sessions"))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        response.json::<Value>().await.unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Creates a session and opens a socket on it, past its (empty) backlog.
    pub async fn open_session(&self) -> (String, Socket) {
        let session = self.create_session().await;
        let mut socket = self.socket(&session, 0).await;
        socket.backlog().await;
        (session, socket)
    }

    /// POSTs JSON and returns status and body.
    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        status_and_json(self.http.post(self.url(path)).json(&body)).await
    }

    /// PATCHes JSON and returns status and body.
    pub async fn patch(&self, path: &str, body: Value) -> (u16, Value) {
        status_and_json(self.http.patch(self.url(path)).json(&body)).await
    }

    /// PUTs JSON and returns status and body.
    pub async fn put(&self, path: &str, body: Value) -> (u16, Value) {
        status_and_json(self.http.put(self.url(path)).json(&body)).await
    }

    /// GETs JSON and returns status and body.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let response = self.http.get(self.url(path)).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// DELETEs `path` and returns status and body.
    pub async fn delete(&self, path: &str) -> (u16, Value) {
        let response = self.http.delete(self.url(path)).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// DELETEs a session and returns the status.
    pub async fn delete_session(&self, session: &str) -> u16 {
        let url = self.url(&format!("/api/sessions/{session}"));
        self.http
            .delete(url)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    /// Sends a user message over REST and returns the run id.
    pub async fn say(&self, session: &str, text: &str) -> String {
        let (status, body) = self
            .post(
                &format!("/api/sessions/{session}/messages"),
                json!({"text": text}),
            )
            .await;
        assert_eq!(status, 202, "{body}");
        body["runId"].as_str().unwrap().to_string()
    }

    /// The whole log, read over REST page by page.
    pub async fn log(&self, session: &str) -> Vec<(u64, Event)> {
        let mut events = Vec::new();
        loop {
            let after = events.last().map_or(0, |(seq, _)| *seq);
            let path = format!("/api/sessions/{session}/events?after={after}&limit=10000");
            let (status, body) = self.get(&path).await;
            assert_eq!(status, 200, "{body}");
            let page = body["events"].as_array().unwrap();
            events.extend(page.iter().map(|e| {
                let event = serde_json::from_value(e["event"].clone()).unwrap();
                (e["seq"].as_u64().unwrap(), event)
            }));
            if page.len() < 10_000 {
                return events;
            }
        }
    }

    /// Opens a socket on `session` after `after` (with this client's token).
    pub async fn socket(&self, session: &str, after: u64) -> Socket {
        self.try_socket(session, after, &[])
            .await
            .unwrap_or_else(|(status, body)| panic!("socket refused ({status}): {body}"))
    }

    /// Tries to open a socket with this client's token and extra headers.
    pub async fn try_socket(
        &self,
        session: &str,
        after: u64,
        extra: &[(&str, &str)],
    ) -> Result<Socket, (u16, Value)> {
        self.try_socket_at(&format!("/api/sessions/{session}/ws?after={after}"), extra)
            .await
    }

    /// Opens the read-only socket of a share link (no credentials needed).
    pub async fn try_shared_socket(&self, token: &str, after: u64) -> Result<Socket, (u16, Value)> {
        self.try_socket_at(&format!("/api/shared/{token}/ws?after={after}"), &[])
            .await
    }

    /// Opens a socket at `path_and_query` with this client's credentials and `extra` headers.
    pub async fn try_socket_at(
        &self,
        path_and_query: &str,
        extra: &[(&str, &str)],
    ) -> Result<Socket, (u16, Value)> {
        let url = format!("ws://{}{path_and_query}", self.address);
        let auth = self.auth_header();
        let mut headers: Vec<(&str, &str)> = extra.to_vec();
        if let Some((name, value)) = &auth {
            headers.push((name, value.as_str()));
        }
        Socket::connect_with(&url, &headers).await
    }

    /// The text of `GET /metrics`.
    pub async fn metrics(&self) -> String {
        let response = self.http.get(self.url("/metrics")).send().await.unwrap();
        response.text().await.unwrap()
    }

    /// Stops the server (its runs stay in the test runtime; use paused sessions).
    pub async fn stop(&self) {
        if let Some(handle) = &self.handle {
            handle.stop(true).await;
        }
    }
}

/// Sends a request; returns its status and JSON body (`null` when it has none).
pub async fn status_and_json(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The event type names of a log.
pub fn types(events: &[(u64, Event)]) -> Vec<&'static str> {
    events.iter().map(|(_, e)| e.type_name()).collect()
}
