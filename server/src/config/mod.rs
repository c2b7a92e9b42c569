//! Configuration from CLI flags, `TANDEM_*` environment variables and a `tandem.toml`
//! (`--config`), in that order of precedence, with defaults in code ([`load`]). Validated
//! once at start with messages that say what to fix.

mod access;
mod budgets;
mod commands;
pub mod context;
mod file;
mod limits;
mod prices;
mod provider;
mod sandbox;
mod traces;
mod webhooks;

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

pub use access::{is_loopback, AccessArgs, AccessError, AuthMode};
pub use budgets::{BudgetArgs, BudgetOverrun};
pub use commands::{
    parse_cap, Cap, Command, EvalCommand, FeedbackCommand, SchedulesCommand, TracesCommand,
    UsersCommand,
};
pub use context::ContextArgs;
pub use file::{load, render, LoadError, Loaded, Setting};
pub use limits::LimitArgs;
pub use prices::{Price, PriceError, PriceTable};
pub use provider::{ProviderArgs, ProviderError, ProviderSettings, RetryPolicy, OPENAI_URL};
pub use sandbox::{PythonFiles, SandboxArgs, Toggle};
pub use traces::{OtlpProtocol, TraceArgs};
pub use webhooks::{WebhookArgs, WebhookEvent};

/// Log writers on a database that takes several at once (`--log-writers`): two keep
/// PostgreSQL busy while one batch's round trip is in flight (docs/benchmarks.md, figure 9,
/// "Two log writers").
pub const DEFAULT_LOG_WRITERS: usize = 2;

/// How log lines look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (colored on a terminal).
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `message`, the event's
    /// fields and those of the spans it happened in (`session`, `run`, …).
    Json,
}

/// Which engine answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineKind {
    /// The offline demo assistant (default).
    Demo,
    /// Replays a JSON script of model turns (`--script`).
    Script,
    /// An OpenAI-compatible Chat Completions API (OpenAI, Ollama, llama.cpp, vLLM, …).
    Openai,
    /// The Anthropic Messages API.
    Anthropic,
    /// Timestamped tokens for the benchmark (`--bench-tokens`, paced by `--token-delay-ms`).
    Bench,
}

/// Tandem's settings.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "tandem",
    version,
    about = "A person and an LLM agent, working in tandem.",
    // A later flag overrides an earlier one (tests append their own engine flags).
    args_override_self = true
)]
pub struct Config {
    /// A TOML file with any of these settings, each under its flag's name
    /// (`max-tokens = 2048`); flags and environment variables win over it.
    #[arg(long, env = "TANDEM_CONFIG")]
    pub config: Option<PathBuf>,
    /// Prints the effective configuration (secrets masked) and where each value came
    /// from, then exits.
    #[arg(long)]
    pub print_config: bool,
    /// How log lines look: `text`, or `json` (one object per line, with the session and
    /// run ids of what the line is about).
    #[arg(long, env = "TANDEM_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, env = "TANDEM_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,
    /// Database URL: `sqlite://path` (created if missing, readable by its owner only) or
    /// `postgres://user@host/database` (shared by any number of instances).
    #[arg(
        long,
        env = "TANDEM_DATABASE_URL",
        default_value = "sqlite://data/tandem.db",
        global = true
    )]
    pub database_url: String,
    /// The engine: `demo`, `script`, `openai`, `anthropic` or `bench`.
    #[arg(long, env = "TANDEM_ENGINE", value_enum, default_value = "demo")]
    pub engine: EngineKind,
    /// The script file the `script` engine replays.
    #[arg(long, env = "TANDEM_SCRIPT")]
    pub script: Option<PathBuf>,
    /// Pause before each streamed word, in milliseconds (0 streams at once).
    #[arg(long, env = "TANDEM_TOKEN_DELAY_MS", default_value_t = 25)]
    pub token_delay_ms: u64,
    /// Tokens per model call of the `bench` engine.
    #[arg(long, env = "TANDEM_BENCH_TOKENS", default_value_t = 100)]
    pub bench_tokens: u64,
    /// Folder of the built page (Trunk's `dist`).
    #[arg(long, env = "TANDEM_WEB_DIR", default_value = "dist")]
    pub web_dir: PathBuf,
    /// How often sockets are pinged, in milliseconds.
    #[arg(long, env = "TANDEM_HEARTBEAT_INTERVAL_MS", default_value_t = 10_000)]
    pub heartbeat_interval_ms: u64,
    /// How long a socket may stay silent (no pong, no frame) before it is closed, in ms.
    #[arg(long, env = "TANDEM_CLIENT_TIMEOUT_MS", default_value_t = 30_000)]
    pub client_timeout_ms: u64,
    /// HTTP worker threads (default: one per core).
    #[arg(long, env = "TANDEM_WORKERS")]
    pub workers: Option<usize>,
    /// Folder the file tools work in; each user gets a folder of their own inside it.
    #[arg(long, env = "TANDEM_WORKSPACE_DIR", default_value = "data/workspace")]
    pub workspace_dir: PathBuf,
    /// Tools that must be approved by a person before they run (comma-separated).
    #[arg(long, env = "TANDEM_REQUIRE_APPROVAL", value_delimiter = ',')]
    pub require_approval: Vec<String>,
    /// Tools that run without approval, even if they change things (comma-separated).
    #[arg(long, env = "TANDEM_SKIP_APPROVAL", value_delimiter = ',')]
    pub skip_approval: Vec<String>,
    /// What a message sent while a run works does when it does not say
    /// (`whileRunning`): `queue` (waits its turn), `interrupt` (stops the run, then runs),
    /// `steer` (joins the run at its next model call) or `reject` (409 `run_active`).
    #[arg(long, env = "TANDEM_WHILE_RUNNING", default_value = "queue",
          value_parser = while_running)]
    pub while_running: shared::queue::WhileRunning,
    /// Origins (`https://files.example.com`) an AG-UI client's binary part may name by
    /// `url` for the server to fetch (comma-separated). None by default: a server that
    /// fetches any URL it is sent can be turned against its own network.
    #[arg(long, env = "TANDEM_ATTACHMENT_URL_ORIGINS", value_delimiter = ',')]
    pub attachment_url_origins: Vec<String>,
    /// Models that take no images nor PDFs: they get a short note in place of each
    /// (comma-separated; a name ending in `*` matches a prefix; `none`: every model takes
    /// them). Default: the text-only models Tandem knows (gpt-3.5*, o1-mini*, o3-mini*,
    /// deepseek*, claude-2*, claude-instant*).
    #[arg(long, env = "TANDEM_MODELS_WITHOUT_IMAGES", value_delimiter = ',')]
    pub models_without_images: Option<Vec<String>>,
    /// Default deadline for a person's answer, in seconds (off unless set); a question's
    /// own `timeoutSeconds` wins.
    #[arg(long, env = "TANDEM_INPUT_TIMEOUT_SECS")]
    pub input_timeout_secs: Option<u64>,
    /// The shortest interval a schedule's `everySeconds` may have, in seconds.
    #[arg(long, env = "TANDEM_MIN_SCHEDULE_INTERVAL_SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub min_schedule_interval_seconds: u64,
    /// How many trials of one replay run at once.
    #[arg(long, env = "TANDEM_REPLAY_CONCURRENCY", default_value_t = 2,
          value_parser = clap::value_parser!(u16).range(1..=64))]
    pub replay_concurrency: u16,
    /// The schedules' clock: the server's UTC (a test moves its own by hand).
    #[arg(skip)]
    pub clock: crate::domain::Clock,
    /// Delete finished (idle) sessions not updated for this many hours (off unless set).
    #[arg(long, env = "TANDEM_RETENTION_HOURS")]
    pub retention_hours: Option<u64>,
    /// How long a write waits for a database lock held by another process (or, on
    /// PostgreSQL, another instance), in ms.
    #[arg(
        long,
        alias = "sqlite-busy-timeout-ms",
        env = "TANDEM_LOCK_TIMEOUT_MS",
        default_value_t = 5_000
    )]
    pub lock_timeout_ms: u64,
    /// How long a run lease lasts without renewal, in ms: when an instance dies, another
    /// takes its runs over this long after its last heartbeat (heartbeats come at a third
    /// of it).
    #[arg(long, env = "TANDEM_RUN_LEASE_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(300..))]
    pub run_lease_ms: u64,
    /// This instance's name, kept across restarts and unique among the instances sharing
    /// a database (a host or pod name): restarted, it takes its runs back at once instead
    /// of after their lease. Without one, each start is a new instance.
    #[arg(long, env = "TANDEM_INSTANCE_NAME", value_parser = instance_name)]
    pub instance_name: Option<String>,
    /// How many log writers commit at once on PostgreSQL, each on its own connection (a
    /// session's writes always go through the same one, so their order holds). SQLite
    /// takes one writer at a time and always has one.
    #[arg(long, env = "TANDEM_LOG_WRITERS", default_value_t = DEFAULT_LOG_WRITERS,
          value_parser = clap::builder::TypedValueParser::map(clap::value_parser!(u16).range(1..=16), usize::from))]
    pub log_writers: usize,
    /// How long a write keeps retrying a busy, locked or full database before it fails, in ms.
    #[arg(long, env = "TANDEM_WRITE_RETRY_MS", default_value_t = 30_000)]
    pub write_retry_ms: u64,
    /// Whether content deltas of one message that reach the writer together are committed
    /// as one event (`eventlog/coalesce.rs`); off only to measure what it saves.
    #[arg(long, env = "TANDEM_JOIN_DELTAS", default_value_t = true,
          action = clap::ArgAction::Set, hide = true)]
    pub join_deltas: bool,
    /// How long a stop (SIGTERM, Ctrl-C) may take, in ms: sockets are told Tandem is
    /// going away, runs stop at a safe point and hand their leases back, the log is
    /// flushed and every task joined within it.
    #[arg(long, env = "TANDEM_SHUTDOWN_GRACE_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(100..))]
    pub shutdown_grace_ms: u64,
    /// A JSON price table (USD per million tokens by model) that costs every model call;
    /// see `docs/prices.example.json`.
    #[arg(long, env = "TANDEM_PRICES")]
    pub prices: Option<PathBuf>,
    /// MCP servers whose tools the model may call: the `{"mcpServers": {…}}` JSON file
    /// MCP clients share (see docs/protocol.md, "MCP servers as tools").
    #[arg(long, env = "TANDEM_MCP_CONFIG")]
    pub mcp_config: Option<PathBuf>,
    /// The system prompt every model call starts with (an empty one sends none); without
    /// it or `--system-prompt-file`, Tandem's own (see `agent/prompt.rs`).
    #[arg(long, env = "TANDEM_SYSTEM_PROMPT")]
    pub system_prompt: Option<String>,
    /// Models a session may pick besides the engine's own (`--model`), comma-separated:
    /// other models of the same provider.
    #[arg(long, env = "TANDEM_MODELS", value_delimiter = ',')]
    pub models: Vec<String>,
    /// Models of the same provider that take a model call in turn when the one called keeps
    /// failing before its first token (429 or 5xx after the retries), comma-separated.
    #[arg(long, env = "TANDEM_FALLBACK_MODELS", value_delimiter = ',')]
    pub fallback_models: Vec<String>,
    /// The context window: budgets and what becomes of the turns that no longer fit.
    #[command(flatten)]
    pub context: ContextArgs,
    /// A JSON Schema file every shared state must be valid against (a change that breaks
    /// it is refused: 422 for a person, an error result for the model).
    #[arg(long, env = "TANDEM_STATE_SCHEMA")]
    pub state_schema: Option<PathBuf>,
    /// A file holding the system prompt.
    #[arg(
        long,
        env = "TANDEM_SYSTEM_PROMPT_FILE",
        conflicts_with = "system_prompt"
    )]
    pub system_prompt_file: Option<PathBuf>,
    /// Model provider settings (used by the `openai` and `anthropic` engines).
    #[command(flatten)]
    pub provider: ProviderArgs,
    /// Authentication, host names and origins.
    #[command(flatten)]
    pub access: AccessArgs,
    /// Limits per request, user and run.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// What each user may spend on model calls.
    #[command(flatten)]
    pub budgets: BudgetArgs,
    /// Webhooks when a session starts waiting for a person.
    #[command(flatten)]
    pub webhooks: WebhookArgs,
    /// OpenTelemetry traces (off unless an OTLP endpoint is set).
    #[command(flatten)]
    pub traces: TraceArgs,

    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// A command instead of serving.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// A setting that cannot work.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("the script engine needs a script: set TANDEM_SCRIPT or pass --script <file>")]
    MissingScript,
    #[error("--client-timeout-ms must be longer than --heartbeat-interval-ms (and that above 0)")]
    Heartbeat,
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    Access(#[from] AccessError),
    #[error(transparent)]
    Prices(#[from] PriceError),
    #[error("cannot read the system prompt file {path}: {source}")]
    SystemPrompt {
        path: String,
        source: std::io::Error,
    },
}

/// The system prompt the operator chose (`--system-prompt`, `--system-prompt-file`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SystemPrompt {
    /// None set: Tandem's own (`agent::prompt::DEFAULT`).
    Default,
    /// Their own text.
    Own(String),
    /// Set empty: no system prompt.
    Off,
}

/// The socket heartbeat: ping every `interval`; close a client silent for `timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heartbeat {
    pub interval: std::time::Duration,
    pub timeout: std::time::Duration,
}

impl Config {
    /// The socket heartbeat these settings give.
    pub fn heartbeat(&self) -> Heartbeat {
        Heartbeat {
            interval: std::time::Duration::from_millis(self.heartbeat_interval_ms),
            timeout: std::time::Duration::from_millis(self.client_timeout_ms),
        }
    }

    /// The price table from `--prices` (empty without one).
    pub fn price_table(&self) -> Result<PriceTable, PriceError> {
        self.prices
            .as_deref()
            .map_or_else(|| Ok(PriceTable::default()), PriceTable::load)
    }

    /// The operator's system prompt: the file's, the flag's, or none set (Tandem's
    /// default applies).
    pub fn system_prompt(&self) -> Result<SystemPrompt, ConfigError> {
        let text = match (&self.system_prompt_file, &self.system_prompt) {
            (Some(path), _) => {
                std::fs::read_to_string(path).map_err(|source| ConfigError::SystemPrompt {
                    path: path.display().to_string(),
                    source,
                })?
            }
            (None, Some(text)) => text.clone(),
            (None, None) => return Ok(SystemPrompt::Default),
        };
        Ok(match text.trim().is_empty() {
            true => SystemPrompt::Off,
            false => SystemPrompt::Own(text),
        })
    }

    /// The context policy of the runs: budgets per model (known windows for the real
    /// providers' models) and the strategy.
    pub fn context_policy(&self) -> context::ContextPolicy {
        let known = matches!(self.engine, EngineKind::Openai | EngineKind::Anthropic);
        let answer = self.provider.max_tokens as usize;
        self.context.policy(answer, known)
    }

    /// Checks the settings clap cannot and that need nothing but themselves; the modules
    /// they configure check the rest as they build from them
    /// (startup's `check` runs it all). Serving only: a command (`tandem users …`)
    /// needs only the database.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.command.is_some() {
            return Ok(());
        }
        self.access.validate(&self.bind)?;
        if self.engine == EngineKind::Script && self.script.is_none() {
            return Err(ConfigError::MissingScript);
        }
        if self.heartbeat_interval_ms == 0 || self.client_timeout_ms <= self.heartbeat_interval_ms {
            return Err(ConfigError::Heartbeat);
        }
        self.price_table()?;
        self.system_prompt()?;
        match self.engine {
            EngineKind::Openai => drop(self.provider.openai()?),
            EngineKind::Anthropic => drop(self.provider.anthropic()?),
            EngineKind::Demo | EngineKind::Script | EngineKind::Bench => {}
        }
        Ok(())
    }
}

/// An instance name: 1 to 64 letters, digits, `.`, `_` or `-`.
fn instance_name(text: &str) -> Result<String, String> {
    let valid = (1..=64).contains(&text.len())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    match valid {
        true => Ok(text.to_string()),
        false => Err("use 1 to 64 letters, digits, `.`, `_` or `-`".into()),
    }
}

/// Reads a `--while-running` mode.
fn while_running(name: &str) -> Result<shared::queue::WhileRunning, String> {
    shared::queue::WhileRunning::parse(name).ok_or_else(|| {
        let modes: Vec<&str> = shared::queue::WhileRunning::ALL
            .iter()
            .map(|mode| mode.as_str())
            .collect();
        format!("`{name}` is not one of {}", modes.join(", "))
    })
}
