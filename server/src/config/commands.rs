//! The commands `tandem` runs instead of serving (`users`, `feedback`, `traces`, `schedules`,
//! `eval`), as the command line
//! gives them: plain values; each command runs where its work is (`auth::cli`,
//! `feedback_cli`), which reads them from here.

use clap::Subcommand;
use shared::feedback::Rating;

/// What `tandem` does besides serving.
#[derive(Debug, Clone, PartialEq, Subcommand)]
pub enum Command {
    /// Manages the users of `--auth token`: `add NAME` (prints their token once), `list`,
    /// `revoke NAME`.
    #[command(subcommand)]
    Users(UsersCommand),
    /// Lists everyone's ratings of answers, one JSON object a line, newest change first.
    Feedback(FeedbackCommand),
    /// Rebuilds the spans of a past session from its log: `export --session ID`.
    #[command(subcommand)]
    Traces(TracesCommand),
    /// Manages a user's schedules: `list`, `add --name … --message … (--cron … --timezone
    /// … | --at … | --every-seconds …)`, `rm ID`.
    #[command(subcommand)]
    Schedules(SchedulesCommand),
    /// Replays recorded conversations on a running server (`--server`) and prints each
    /// variant's pass^k; exits 1 when one is below `--min-pass-hat-k` (a gate for CI).
    Eval(EvalCommand),
}

/// What `tandem eval` asks a running server for, and the bar it gates on.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct EvalCommand {
    /// The server's address (`http://127.0.0.1:8080`).
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub server: String,
    /// A file holding the API token to call it with (not needed with `--auth none`).
    #[arg(long)]
    pub token_file: Option<std::path::PathBuf>,
    /// The conversations to replay (session ids, comma-separated).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["feedback", "title_contains", "since"])]
    pub sessions: Vec<String>,
    /// Conversations whose answer was rated so (`up` or `down`).
    #[arg(long, value_parser = rating)]
    pub feedback: Option<Rating>,
    /// Conversations whose title contains this.
    #[arg(long)]
    pub title_contains: Option<String>,
    /// Conversations updated since this instant (RFC 3339).
    #[arg(long)]
    pub since: Option<String>,
    /// A variant, `label=model` (`label=` for the model each run used); repeat for more.
    #[arg(long = "variant", required = true)]
    pub variants: Vec<String>,
    /// Trials per variant and conversation.
    #[arg(long, default_value_t = 3)]
    pub k: u32,
    /// Text every passing answer contains (repeat for more); without any, a judge
    /// compares each answer with the recorded one.
    #[arg(long = "expect-contains")]
    pub contains: Vec<String>,
    /// The lowest pass^k a variant may have (0 to 1).
    #[arg(long, default_value_t = 1.0)]
    pub min_pass_hat_k: f64,
    /// Where to write the eval as JSON.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    /// How long to wait for the eval to end, in seconds.
    #[arg(long, default_value_t = 3600)]
    pub timeout_seconds: u64,
}

/// What `tandem schedules` does, for one user (`--user`, `local` by default).
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum SchedulesCommand {
    /// Lists the user's schedules, one JSON object a line, as `GET /api/schedules` does.
    List {
        #[arg(long, default_value = "local")]
        user: String,
    },
    /// Adds a schedule and prints it (its id and next time) as JSON.
    Add {
        #[arg(long, default_value = "local")]
        user: String,
        /// What the person calls it.
        #[arg(long)]
        name: String,
        /// The message each fire sends.
        #[arg(long)]
        message: String,
        /// A cron pattern (5 fields, or 6 with seconds first), with `--timezone`.
        #[arg(long, requires = "timezone", conflicts_with_all = ["at", "every_seconds"])]
        cron: Option<String>,
        /// The IANA time zone of `--cron` (`Europe/Paris`).
        #[arg(long)]
        timezone: Option<String>,
        /// One instant (RFC 3339).
        #[arg(long, conflicts_with = "every_seconds")]
        at: Option<String>,
        /// Every this many seconds.
        #[arg(long)]
        every_seconds: Option<u64>,
        /// One session every fire sends to (otherwise each fire starts a new one).
        #[arg(long)]
        session: Option<String>,
        /// One of the server's models.
        #[arg(long)]
        model: Option<String>,
        /// `skip`, `once` (default) or `all`.
        #[arg(long, value_parser = misfire)]
        misfire: Option<shared::schedules::Misfire>,
        /// `skip` (default), `queue` or `cancel`.
        #[arg(long, value_parser = overlap)]
        overlap: Option<shared::schedules::Overlap>,
    },
    /// Deletes one of the user's schedules and its fires.
    Rm {
        #[arg(long, default_value = "local")]
        user: String,
        /// The schedule's id.
        id: String,
    },
}

fn misfire(text: &str) -> Result<shared::schedules::Misfire, String> {
    serde_json::from_value(text.into()).map_err(|_| "`skip`, `once` or `all`".into())
}

fn overlap(text: &str) -> Result<shared::schedules::Overlap, String> {
    serde_json::from_value(text.into()).map_err(|_| "`skip`, `queue` or `cancel`".into())
}

/// What `tandem traces` does.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum TracesCommand {
    /// Sends a session's spans (every run in it, with the times its log recorded) to an
    /// OTLP collector (`--endpoint`, else the configured `OTEL_EXPORTER_OTLP_ENDPOINT`),
    /// or writes them to a file as OTLP JSON (`--out`).
    Export {
        /// The session's id.
        #[arg(long)]
        session: String,
        /// A collector's base URL (`http://localhost:4318`), with the configured protocol.
        #[arg(long, conflicts_with = "out")]
        endpoint: Option<String>,
        /// A file to write the spans to instead, as OTLP JSON (`-` for standard output).
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
}

/// What `tandem users` does.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum UsersCommand {
    /// Creates a user and prints their API token (once).
    Add {
        /// 1 to 32 lowercase letters, digits, `-` or `_`.
        name: String,
    },
    /// Lists users, revoked ones included.
    List,
    /// Revokes a user: their token and sign-ins stop working at once; their sessions stay.
    Revoke { name: String },
    /// Shows what a user may spend and has spent (UTC day and month), or sets their own
    /// caps: an amount, `none` (no cap for them) or `default` (the server's `--budget-*`).
    Budget {
        name: String,
        /// US dollars per day.
        #[arg(long, value_parser = own_limit)]
        daily_usd: Option<String>,
        /// US dollars per month.
        #[arg(long, value_parser = own_limit)]
        monthly_usd: Option<String>,
        /// Tokens (input plus output) per day.
        #[arg(long, value_parser = own_limit)]
        daily_tokens: Option<String>,
        /// Tokens per month.
        #[arg(long, value_parser = own_limit)]
        monthly_tokens: Option<String>,
    },
}

/// A user's own cap, as `tandem users budget` takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cap {
    /// `none`: no cap for them.
    Unlimited,
    /// `default`: the server's `--budget-*`.
    Default,
    /// An amount, 0 or more.
    At(f64),
}

/// Reads a cap: `5`, `0.5`, `none` or `default`.
pub fn parse_cap(text: &str) -> Result<Cap, String> {
    match text {
        "none" => Ok(Cap::Unlimited),
        "default" => Ok(Cap::Default),
        _ => match text.parse::<f64>() {
            Ok(value) if value.is_finite() && value >= 0.0 => Ok(Cap::At(value)),
            _ => Err(format!(
                "`{text}` is not a cap: give an amount (0 or more), `none` or `default`"
            )),
        },
    }
}

/// Checks a cap as the flag takes it (kept as written; [`parse_cap`] reads it).
fn own_limit(text: &str) -> Result<String, String> {
    parse_cap(text).map(|_| text.to_string())
}

/// What `tandem feedback` lists.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct FeedbackCommand {
    /// Only ratings given or changed in the last this many hours.
    #[arg(long)]
    pub since_hours: Option<u64>,
    /// Only `up` or only `down`.
    #[arg(long, value_parser = rating)]
    pub rating: Option<Rating>,
    /// At most this many.
    #[arg(long, default_value_t = 1000)]
    pub limit: u32,
}

fn rating(text: &str) -> Result<Rating, String> {
    Rating::parse(text).ok_or_else(|| "`up` or `down`".into())
}
