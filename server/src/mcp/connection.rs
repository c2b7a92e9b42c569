//! One MCP server's life: connect (start the process, or open the HTTP session), list its
//! tools, keep the list fresh on `notifications/tools/list_changed`, and when the server
//! fails to start, goes away or is hung up on (a call timed out or found the connection
//! broken), say why and try again with backoff until Tandem stops.
//!
//! The state callers see is a snapshot ([`Status`]): the peer and its tools while
//! connected, the reason and the next attempt while not. Nothing here waits on a call.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use tokio::sync::{watch, Notify};
use tokio_util::sync::CancellationToken;

use super::config::{ServerConfig, Transport};
use super::tools::McpTool;

/// The first retry's wait; each failure doubles it up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long connecting (start, handshake, first tool list) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where a server stands.
#[derive(Clone)]
pub enum Status {
    /// Not tried yet.
    Starting,
    Connected {
        peer: Peer<RoleClient>,
        tools: Arc<Vec<Arc<McpTool>>>,
        /// Cancelled to drop this connection (and stop its process) so the supervisor
        /// starts the server again: a call timed out, or the connection broke.
        hang_up: CancellationToken,
    },
    Down {
        reason: String,
        retry_at: Instant,
    },
}

/// A configured server and its current status.
pub struct Server {
    pub config: ServerConfig,
    /// Where the server's `notifications/progress` go: to the call that asked for them.
    pub progress: ProgressDispatcher,
    status: RwLock<Status>,
    /// Bumped on every status change, so a caller can wait for the first attempt.
    changes: watch::Sender<u64>,
}

impl Server {
    fn new(config: ServerConfig) -> Self {
        Self {
            config,
            progress: ProgressDispatcher::new(),
            status: RwLock::new(Status::Starting),
            changes: watch::channel(0).0,
        }
    }

    /// The current status.
    pub fn status(&self) -> Status {
        self.status.read().expect("status lock poisoned").clone()
    }

    fn set(&self, status: Status) {
        *self.status.write().expect("status lock poisoned") = status;
        self.changes.send_modify(|n| *n += 1);
    }

    /// Gives up on the current connection (a call to it timed out or found it broken): the
    /// server is down for callers at once, and the supervisor drops the connection
    /// (stopping a process it started) and starts it again with backoff.
    pub fn hang_up(&self, reason: String) {
        let mut status = self.status.write().expect("status lock poisoned");
        if let Status::Connected { hang_up, .. } = &*status {
            hang_up.cancel();
            *status = Status::Down {
                reason,
                retry_at: Instant::now() + FIRST_BACKOFF,
            };
            drop(status);
            self.changes.send_modify(|n| *n += 1);
        }
    }

    /// Waits until the first attempt to connect has ended (either way) or `limit` passed.
    pub async fn first_attempt(&self, limit: Duration) {
        let mut changes = self.changes.subscribe();
        let _ = tokio::time::timeout(limit, changes.wait_for(|n| *n > 0)).await;
    }
}

/// Tells the supervisor that the server's tool list changed, and a call how far it got.
struct Handler {
    tools_changed: Arc<Notify>,
    progress: ProgressDispatcher,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.handle_notification(params).await;
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("tandem", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// Starts the supervisor of one server; it runs until the lifecycle's ending.
pub fn spawn(config: ServerConfig, lifecycle: &crate::lifecycle::Lifecycle) -> Arc<Server> {
    let server = Arc::new(Server::new(config));
    let shutdown = lifecycle.ending().clone();
    lifecycle.spawn_until_ending(supervise(server.clone(), shutdown));
    server
}

async fn supervise(server: Arc<Server>, shutdown: CancellationToken) {
    let name = server.config.name.clone();
    let mut backoff = FIRST_BACKOFF;
    loop {
        let tools_changed = Arc::new(Notify::new());
        let hang_up = CancellationToken::new();
        let attempt =
            tokio::time::timeout(CONNECT_TIMEOUT, connect(&server, &tools_changed, &hang_up));
        let reason = tokio::select! {
            _ = shutdown.cancelled() => return,
            attempt = attempt => match attempt {
                Err(_) => format!("it did not finish connecting within {CONNECT_TIMEOUT:?}"),
                Ok(Err(reason)) => reason,
                Ok(Ok(service)) => {
                    backoff = FIRST_BACKOFF;
                    tracing::info!(server = %name, "MCP server connected");
                    match serve(&server, service, &tools_changed, &hang_up, &shutdown).await {
                        Some(reason) => reason,
                        None => return,
                    }
                }
            },
        };
        tracing::warn!(server = %name, %reason, retry_in = ?backoff, "MCP server unavailable");
        server.set(Status::Down {
            reason,
            retry_at: Instant::now() + backoff,
        });
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

type Service = RunningService<RoleClient, Handler>;

/// Starts or opens the server, shakes hands and reads its tools.
async fn connect(
    server: &Server,
    tools_changed: &Arc<Notify>,
    hang_up: &CancellationToken,
) -> Result<Service, String> {
    let handler = Handler {
        tools_changed: tools_changed.clone(),
        progress: server.progress.clone(),
    };
    let service = match &server.config.transport {
        Transport::Stdio { command, args, env } => {
            let mut process = tokio::process::Command::new(command);
            // `vars_os`: `vars` panics on a variable that is not UTF-8.
            let own = std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
            let env = super::environment::for_server(own, env);
            process.args(args).env_clear().envs(env).kill_on_drop(true);
            let transport = TokioChildProcess::new(process)
                .map_err(|e| format!("`{command}` could not be started: {e}"))?;
            handler.serve(transport).await
        }
        Transport::Http { url, headers } => {
            let mut custom = std::collections::HashMap::new();
            for (name, value) in headers {
                let name = name
                    .parse()
                    .map_err(|_| format!("bad header name `{name}`"))?;
                let value = value
                    .parse()
                    .map_err(|_| "a header value is not valid".to_string())?;
                custom.insert(name, value);
            }
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            handler
                .serve(StreamableHttpClientTransport::from_config(config))
                .await
        }
    }
    .map_err(|e| format!("the MCP handshake failed: {e}"))?;
    refresh(server, service.peer(), hang_up).await?;
    Ok(service)
}

/// Serves a connected server until it goes away or is hung up on (`Some(why)`) or
/// Tandem stops (`None`). Dropping the service stops a process it started.
async fn serve(
    server: &Server,
    service: Service,
    tools_changed: &Notify,
    hang_up: &CancellationToken,
    shutdown: &CancellationToken,
) -> Option<String> {
    let peer = service.peer().clone();
    let ended = service.waiting();
    tokio::pin!(ended);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return None,
            _ = hang_up.cancelled() => {
                let reason = match server.status() {
                    Status::Down { reason, .. } => reason,
                    _ => "Tandem hung up on it".to_string(),
                };
                return Some(reason);
            }
            quit = &mut ended => return Some(match quit {
                Ok(reason) => format!("the server went away ({reason:?})"),
                Err(error) => format!("the connection failed: {error}"),
            }),
            _ = tools_changed.notified() => {
                if let Err(reason) = refresh(server, &peer, hang_up).await {
                    tracing::warn!(server = %server.config.name, %reason, "could not refresh the tool list");
                }
            }
        }
    }
}

/// Reads the server's tools and publishes them.
async fn refresh(
    server: &Server,
    peer: &Peer<RoleClient>,
    hang_up: &CancellationToken,
) -> Result<(), String> {
    let listed = peer
        .list_all_tools()
        .await
        .map_err(|e| format!("listing its tools failed: {e}"))?;
    let tools = listed
        .into_iter()
        .filter_map(|tool| McpTool::from_listed(&server.config, tool))
        .map(Arc::new)
        .collect();
    let tools: Vec<Arc<McpTool>> = tools;
    tracing::info!(server = %server.config.name, tools = tools.len(), "MCP tool list read");
    if hang_up.is_cancelled() {
        return Ok(());
    }
    server.set(Status::Connected {
        peer: peer.clone(),
        tools: Arc::new(tools),
        hang_up: hang_up.clone(),
    });
    Ok(())
}
