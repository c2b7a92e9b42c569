//! Assembling and running the application: storage, writer, hub, engine, runner, HTTP.
//!
//! [`Application::build`] binds first (port 0 works; [`Application::port`] tells which),
//! repairs runs a crash left open, then serves; tests run it in-process. The binary
//! serves until SIGTERM or Ctrl-C and then stops cleanly
//! ([`Application::run_until_signalled`]): see [`crate::lifecycle`].

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use actix_web::dev::{Server, ServerHandle};
use actix_web::{middleware, web, App};
use shared::api::ServerInfo;

use crate::agent::slots::QueueBounds;
use crate::agent::{RunDeps, RunSlots, Runner};
use crate::auth::{Auth, Endings};
use crate::config::{Config, ConfigError};
use crate::edge::EdgePolicy;
use crate::eventlog::{Hub, Writer};
use crate::lifecycle::Lifecycle;
use crate::limits::{PerMinute, RateLimits, SocketCounts, SocketLimits};
use crate::routes::Page;
use crate::session_list::ListWatchers;
use crate::state::{AppState, InputLimits};
use crate::store::{Store, UseStore};
use crate::traces::Traces;

mod agent_parts;

use agent_parts::{engine, mcp_tools, models, run_limits, tools, ServerTools};

/// Builds the application on whichever store the database URL opened.
struct BuildOn(Config);

impl UseStore for BuildOn {
    type Output = anyhow::Result<Application>;

    async fn with<S: Store>(self, store: Arc<S>) -> Self::Output {
        Application::build_with(self.0, store).await
    }
}

/// Hands this instance's run leases back (the store's, whichever backend it is).
type ReleaseLeases =
    Box<dyn Fn() -> BoxFuture<'static, Result<u64, crate::store::StoreError>> + Send>;

/// A built, listening application.
pub struct Application {
    port: u16,
    address: String,
    server: Server,
    /// The stop every task takes part in.
    lifecycle: Lifecycle,
    /// The log writer, flushed and joined last.
    writer: Writer,
    /// Its channels are closed when a stop begins, which closes every socket.
    hub: Hub,
    release_leases: ReleaseLeases,
    /// How long a stop may take (`--shutdown-grace-ms`).
    grace: Duration,
    /// Spans still held are exported at the end of a clean stop.
    traces: Traces,
}

/// A setting that cannot work: one the settings show by themselves ([`ConfigError`]), or
/// one the module it configures refuses as it builds from it.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Database(#[from] crate::store::UnsupportedUrl),
    #[error(transparent)]
    Webhooks(#[from] crate::webhooks::WebhookError),
    #[error("--attachment-url-origins: {0}")]
    UrlOrigins(String),
    #[error("--state-schema {path}: {message}")]
    StateSchema { path: String, message: String },
    #[error("OTEL_EXPORTER_OTLP_HEADERS (--otel-headers): {0}")]
    TraceHeaders(String),
}

/// Checks every setting once, at start, with messages that say what to fix: the database
/// URL (all a command such as `tandem users …` needs), then what serving needs.
pub fn check(config: &Config) -> Result<(), SettingError> {
    crate::store::Backend::of(&config.database_url)?;
    if config.command.is_some() {
        return Ok(());
    }
    config.validate()?;
    crate::webhooks::configured(&config.webhooks, &config.bind)?;
    url_origins(config)?;
    state_rules(config)?;
    config
        .traces
        .headers()
        .map_err(SettingError::TraceHeaders)?;
    Ok(())
}

/// The origins an AG-UI client's files may be fetched from by URL.
fn url_origins(config: &Config) -> Result<crate::attachments::fetch::UrlOrigins, SettingError> {
    crate::attachments::fetch::UrlOrigins::parse(&config.attachment_url_origins)
        .map_err(SettingError::UrlOrigins)
}

/// What a shared state may hold: `--state-schema` (read and compiled here) and
/// `--max-state-bytes`.
fn state_rules(config: &Config) -> Result<crate::agent::shared_state::StateRules, SettingError> {
    use crate::agent::shared_state::StateRules;
    let max_bytes = config.limits.max_state_bytes as usize;
    let Some(path) = &config.state_schema else {
        return Ok(StateRules::new(None, max_bytes).expect("no schema to compile"));
    };
    let failed = |message: String| SettingError::StateSchema {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| failed(e.to_string()))?;
    let schema: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| failed(format!("not JSON: {e}")))?;
    StateRules::new(Some(&schema), max_bytes).map_err(failed)
}

impl Application {
    /// Opens the database, repairs interrupted runs, binds and prepares the server.
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        check(&config)?;
        let url = config.database_url.clone();
        let options = crate::store::StoreOptions::configured(&config);
        crate::store::open(&url, &options, BuildOn(config)).await?
    }

    /// Like [`Application::build`], on a store the caller opened (the benchmark runs the
    /// app on a store that writes nothing, to measure what persistence costs).
    pub async fn build_with<S: Store>(config: Config, store: Arc<S>) -> anyhow::Result<Self> {
        let (engine, secrets) = engine(&config)?;
        let hub = Hub::default();
        let lifecycle = Lifecycle::default();
        let ServerTools {
            registry: mut tools,
            for_mcp: approval_flags,
            own: own_tools,
        } = tools(&config)?;
        let attachments = crate::agent::tools::read_attachment::StoredAttachments(store.clone());
        tools.register(Arc::new(
            crate::agent::tools::read_attachment::ReadAttachment::new(Arc::new(attachments)),
        ));
        let mcp = mcp_tools(&config, &approval_flags, &lifecycle).await?;
        let traces = Traces::configured(&config.traces, secrets)?;
        let retry_for = Duration::from_millis(config.write_retry_ms);
        let writer = Writer::spawn_with(store.clone(), hub.clone(), retry_for, config.join_deltas);
        let limits = &config.limits;
        let runner = Runner::new(RunDeps {
            store: store.clone(),
            writer: writer.clone(),
            engine: engine.clone(),
            tools: Arc::new(tools.with_mcp(mcp)),
            own_tools,
            limits: run_limits(&config),
            input_timeout_secs: config.input_timeout_secs,
            slots: RunSlots::new(
                limits.max_concurrent_runs as usize,
                QueueBounds {
                    total: limits.max_queued_runs as usize,
                    per_user: limits.max_queued_runs_per_user as usize,
                },
            ),
            runtime: tokio::runtime::Handle::current(),
            prices: Arc::new(config.price_table()?),
            system_prompt: crate::agent::prompt::configured(config.system_prompt()?),
            context: config.context_policy(),
            models: models(&config, &engine.info().model),
            lifecycle: lifecycle.clone(),
            released_elsewhere: Default::default(),
            while_running: config.while_running,
            image_models: crate::agent::attached::ImageModels::configured(
                config.models_without_images.as_deref(),
            ),
            attachment_limits: crate::attachments::UploadLimits {
                max_bytes: limits.max_attachment_bytes,
                quota_bytes: limits.attachment_quota_bytes,
            },
            state_rules: Arc::new(state_rules(&config)?),
            fallbacks: crate::agent::fallback::Fallbacks::configured(&config.fallback_models),
            budgets: crate::agent::budget::BudgetRules::configured(&config.budgets),
            traces: traces.clone(),
        });
        crate::traces::spawn_live(store.clone(), traces.clone(), &lifecycle);
        let recovered = runner.recovery().recover_interrupted_runs(true).await?;
        if recovered > 0 {
            tracing::warn!(
                recovered,
                "repaired runs left in flight by the last shutdown"
            );
        }
        let endings = Endings::default();
        let lists = ListWatchers::default();
        let scheduler = crate::schedules::Scheduler::new(
            store.clone(),
            runner.clone(),
            config.clock.clone(),
            crate::schedules::Rules {
                min_interval_seconds: config.min_schedule_interval_seconds,
                models: runner.models().to_vec(),
            },
            config.run_lease_ms,
        );
        if let Some(changes) = store.changes().await? {
            let targets = crate::relay::Targets {
                hub: hub.clone(),
                runs: Arc::new(runner.clone()),
                endings: endings.clone(),
                lists: lists.clone(),
                schedules: scheduler.waker(),
            };
            crate::relay::spawn(store.clone(), targets, changes, &lifecycle);
        }
        let beat = Duration::from_millis(config.run_lease_ms / 3);
        crate::agent::Recovery::spawn_lease_keeper(runner.clone(), beat);
        crate::agent::Expiry::spawn_sweeper(runner.clone());
        scheduler.spawn(&lifecycle);
        let replays = crate::replays::Replayer::new(
            (store.clone(), runner.clone(), hub.clone()),
            &lifecycle,
            usize::from(config.replay_concurrency),
            config.run_lease_ms,
        );
        let resumed = replays.resume_all().await?;
        if resumed > 0 {
            tracing::info!(resumed, "took up replays no instance held");
        }
        let stalled_after = Duration::from_millis(config.limits.attachment_stall_ms);
        crate::attachments::spawn_purger(store.clone(), stalled_after, &lifecycle);
        if let Some(hours) = config.retention_hours {
            let max_age = Duration::from_secs(hours.saturating_mul(3600));
            let every = crate::retention::RETENTION_EVERY;
            crate::retention::spawn(store.clone(), hub.clone(), (max_age, every), &lifecycle);
        }
        let info = engine.info();
        let webhook_store = store.clone();
        let hub_for_stop = hub.clone();
        let lease_store = store.clone();
        let release_leases: ReleaseLeases = Box::new(move || {
            let store = lease_store.clone();
            Box::pin(async move { store.release_leases().await })
        });
        let auth = web::Data::new(Auth::new(config.access.auth, store.clone()));
        let state = web::Data::new(AppState {
            store,
            runner,
            hub,
            info: ServerInfo {
                engine: info.kind,
                model: info.model,
                version: env!("CARGO_PKG_VERSION").into(),
                mcp_servers: Vec::new(),
            },
            heartbeat: config.heartbeat(),
            auth_mode: config.access.auth,
            sign_in_ttl: Duration::from_secs(config.access.sign_in_ttl_hours * 3600),
            limits: InputLimits {
                max_body_bytes: limits.max_body_bytes as usize,
                max_frame_bytes: limits.max_frame_bytes as usize,
                agui: crate::agui::FieldLimits {
                    context: limits.max_agui_context_bytes as usize,
                    state: limits.max_agui_state_bytes as usize,
                    forwarded_props: limits.max_agui_forwarded_props_bytes as usize,
                    tools: limits.max_agui_tools_bytes as usize,
                },
            },
            attachments: crate::attachments::UploadLimits {
                max_bytes: limits.max_attachment_bytes,
                quota_bytes: limits.attachment_quota_bytes,
            },
            url_origins: url_origins(&config)?,
            rates: RateLimits::new(PerMinute {
                sessions: limits.sessions_per_minute,
                messages: limits.messages_per_minute,
                shares: limits.shares_per_minute,
                tool_uploads: limits.tool_uploads_per_minute,
                agui_input_bytes: limits.agui_input_bytes_per_minute,
            }),
            sockets: SocketCounts::new(SocketLimits {
                per_user: limits.sockets_per_user,
                viewers_per_session: limits.viewer_sockets_per_session,
                viewers_per_owner: limits.viewer_sockets_per_owner,
            }),
            max_shares_per_session: limits.max_shares_per_session,
            operators: match config.access.auth {
                crate::auth::AuthMode::None => vec![crate::domain::UserName::LOCAL.to_string()],
                crate::auth::AuthMode::Token => config.access.operators.clone(),
            },
            endings,
            lists,
            lifecycle: lifecycle.clone(),
            scheduler,
            replays,
        });
        let listener = TcpListener::bind(&config.bind).map_err(|e| {
            anyhow::anyhow!(
                "cannot listen on {}: {e} (set TANDEM_BIND or --bind)",
                config.bind
            )
        })?;
        let local = listener.local_addr()?;
        if let Some(webhooks) = crate::webhooks::configured(&config.webhooks, &local.to_string())? {
            crate::webhooks::spawn(webhook_store, webhooks, &lifecycle);
        }
        let page = Page::load(config.web_dir.clone());
        let edge = web::Data::new(EdgePolicy::new(
            &local.to_string(),
            config.access.hosts(),
            config.access.origins(),
            page.content_security_policy(),
            Duration::from_millis(config.limits.body_timeout_ms),
        ));
        let security_lines = crate::edge::security_header_lines(&page.content_security_policy());
        let traced = web::Data::new(traces.clone());
        let server =
            crate::http_server::serve(listener, config.workers, security_lines, move || {
                App::new()
                    .app_data(state.clone())
                    .app_data(auth.clone())
                    .app_data(edge.clone())
                    .app_data(traced.clone())
                    .wrap(middleware::Compress::default())
                    .wrap(middleware::from_fn(crate::edge::guard))
                    .wrap(middleware::from_fn(crate::traces::request_span))
                    .configure(|cfg| crate::routes::configure::<S>(cfg, page.clone()))
            })?;
        Ok(Self {
            port: local.port(),
            address: local.to_string(),
            server,
            lifecycle,
            writer,
            hub: hub_for_stop,
            release_leases,
            grace: Duration::from_millis(config.shutdown_grace_ms),
            traces,
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

    /// Serves until stopped by the handle; then the runs and background tasks stop too
    /// (not joined: tests start another instance at once).
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let served = self.server.await;
        self.lifecycle.halting().cancel();
        self.lifecycle.ending().cancel();
        served
    }

    /// Serves until SIGTERM or Ctrl-C, then stops cleanly within the grace: sockets are
    /// told Tandem is going away (1001) and no new connection is taken while requests in
    /// flight finish; each run stops at a safe point; the run leases are handed back, so
    /// another instance (or the next start) continues those runs at once; the MCP
    /// servers and webhook deliveries stop; the log writer commits what it holds and is
    /// joined. An error if the grace ran out first (what was left is repaired at the next
    /// start, as after a crash).
    pub async fn run_until_signalled(self) -> anyhow::Result<()> {
        let Self {
            server,
            lifecycle,
            writer,
            hub,
            release_leases,
            grace,
            traces,
            ..
        } = self;
        let handle = server.handle();
        tokio::pin!(server);
        let signal = tokio::select! {
            served = &mut server => return Ok(served?),
            signal = stop_signal() => signal?,
        };
        tracing::info!(signal, grace_ms = grace.as_millis() as u64, "stopping");
        let started = Instant::now();
        let stop = async {
            // The server's own loop is this future: it must be polled for the stop to
            // be carried out.
            let server_stopped = async {
                let _ = tokio::join!(handle.stop(true), &mut server);
            };
            // The leases go back as soon as the runs have stopped, while connections
            // still close (a socket's close handshake may take the server's second).
            let runs_stopped = async {
                lifecycle.halting().cancel();
                hub.close_all();
                lifecycle.halt().await;
                release(&release_leases).await;
            };
            tokio::join!(runs_stopped, server_stopped);
            // A request that was in flight may have started a run meanwhile (its task was
            // not spawned): its lease goes back too.
            release(&release_leases).await;
            lifecycle.end().await;
            writer.close().await;
            // The ended runs' spans were made (the live task ended with the rest): out
            // they go.
            if let Err(error) = traces.shutdown().await {
                tracing::warn!(%error, "could not export the last spans");
            }
        };
        if tokio::time::timeout(grace, stop).await.is_err() {
            tracing::error!(
                unfinished = lifecycle.unfinished(),
                "the stop ran out of its grace (--shutdown-grace-ms); what was left is repaired at the next start"
            );
            let _ = tokio::time::timeout(Duration::from_secs(1), release(&release_leases)).await;
            anyhow::bail!("did not stop within --shutdown-grace-ms");
        }
        let ms = started.elapsed().as_millis() as u64;
        tracing::info!(ms, "stopped cleanly");
        Ok(())
    }
}

/// Hands the leases back, saying how many.
async fn release(release_leases: &ReleaseLeases) {
    match release_leases().await {
        Ok(0) => {}
        Ok(released) => tracing::info!(released, "handed run leases back"),
        Err(error) => {
            tracing::warn!(%error, "could not hand run leases back; they lapse after --run-lease-ms")
        }
    }
}

/// Waits for SIGTERM or SIGINT (Ctrl-C); says which.
async fn stop_signal() -> std::io::Result<&'static str> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = interrupt.recv() => "SIGINT",
    })
}
