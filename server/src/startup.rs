//! Assembling and running the application: storage, writer, hub, engine, runner, HTTP.
//!
//! [`Application::build`] binds first (port 0 works; [`Application::port`] tells which),
//! repairs runs a crash left open, then serves; tests run it in-process.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::{Server, ServerHandle};
use actix_web::{middleware, web, App, HttpServer};
use shared::api::ServerInfo;

use crate::agent::engines::{
    AnthropicEngine, BenchEngine, DemoEngine, Engine, OpenAiEngine, ScriptEngine,
};
use crate::agent::tools::ToolRegistry;
use crate::agent::{RunDeps, Runner};
use crate::config::{Config, EngineKind};
use crate::eventlog::{Hub, Writer};
use crate::state::AppState;
use crate::store::{SqliteStore, Store};

/// A built, listening application.
pub struct Application {
    port: u16,
    address: String,
    server: Server,
}

impl Application {
    /// Opens the database, repairs interrupted runs, binds and prepares the server.
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        config.validate()?;
        let busy = Duration::from_millis(config.sqlite_busy_timeout_ms);
        let store = SqliteStore::connect(&config.database_url, busy).await?;
        Self::build_with(config, Arc::new(store)).await
    }

    /// Like [`Application::build`], on a store the caller opened (the benchmark runs the
    /// app on a store that writes nothing, to measure what persistence costs).
    pub async fn build_with<S: Store>(config: Config, store: Arc<S>) -> anyhow::Result<Self> {
        let engine = engine(&config)?;
        let hub = Hub::default();
        let retry_for = Duration::from_millis(config.write_retry_ms);
        let writer = Writer::spawn(store.clone(), hub.clone(), retry_for);
        let runner = Runner::new(RunDeps {
            store: store.clone(),
            writer,
            engine: engine.clone(),
            tools: Arc::new(tools(&config)?),
            max_model_calls: config.max_model_calls,
            input_timeout_secs: config.input_timeout_secs,
            runtime: tokio::runtime::Handle::current(),
        });
        let recovered = runner.recover_interrupted_runs().await?;
        if recovered > 0 {
            tracing::warn!(
                recovered,
                "repaired runs left in flight by the last shutdown"
            );
        }
        runner.spawn_expiry_sweeper();
        if let Some(hours) = config.retention_hours {
            let max_age = Duration::from_secs(hours.saturating_mul(3600));
            crate::retention::spawn(
                store.clone(),
                hub.clone(),
                max_age,
                crate::retention::RETENTION_EVERY,
            );
        }
        let info = engine.info();
        let state = web::Data::new(AppState {
            store,
            runner,
            hub,
            info: ServerInfo {
                engine: info.kind,
                model: info.model,
                version: env!("CARGO_PKG_VERSION").into(),
            },
            heartbeat: config.heartbeat(),
        });
        let listener = TcpListener::bind(&config.bind).map_err(|e| {
            anyhow::anyhow!(
                "cannot listen on {}: {e} (set TANDEM_BIND or --bind)",
                config.bind
            )
        })?;
        let local = listener.local_addr()?;
        let web_dir = config.web_dir.clone();
        let mut server = HttpServer::new(move || {
            App::new()
                .app_data(state.clone())
                .wrap(middleware::Compress::default())
                .configure(|cfg| crate::routes::configure::<S>(cfg, web_dir.clone()))
        })
        .shutdown_timeout(1)
        .client_request_timeout(Duration::from_secs(10))
        .on_connect(no_delay);
        if let Some(workers) = config.workers {
            server = server.workers(workers);
        }
        let server = server.listen(listener)?.run();
        Ok(Self {
            port: local.port(),
            address: local.to_string(),
            server,
        })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `host:port` it listens on.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// A handle to stop the server.
    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// Serves until stopped (by a signal or the handle).
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}

fn engine(config: &Config) -> anyhow::Result<Arc<dyn Engine>> {
    let delay = Duration::from_millis(config.token_delay_ms);
    Ok(match config.engine {
        EngineKind::Demo => Arc::new(DemoEngine::new(delay)),
        EngineKind::Script => {
            let path = config
                .script
                .as_deref()
                .ok_or(crate::config::ConfigError::MissingScript)?;
            Arc::new(ScriptEngine::load(path, delay)?)
        }
        EngineKind::Openai => Arc::new(OpenAiEngine::new(config.provider.openai()?)?),
        EngineKind::Anthropic => Arc::new(AnthropicEngine::new(config.provider.anthropic()?)?),
        EngineKind::Bench => Arc::new(BenchEngine::new(config.bench_tokens, delay)),
    })
}

/// The built-in tools with the configured approval settings.
fn tools(config: &Config) -> anyhow::Result<ToolRegistry> {
    let mut tools = ToolRegistry::builtin(config.workspace_dir.clone());
    for name in config.require_approval.iter().filter(|n| !n.is_empty()) {
        tools.set_approval(name.trim(), true)?;
    }
    for name in config.skip_approval.iter().filter(|n| !n.is_empty()) {
        tools.set_approval(name.trim(), false)?;
    }
    Ok(tools)
}

/// Turns off Nagle's algorithm on every accepted connection: each event frame is small
/// and must leave at once, not wait for the client's delayed ACK (~40 ms).
fn no_delay(connection: &dyn std::any::Any, _: &mut actix_web::dev::Extensions) {
    if let Some(stream) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
    }
}
