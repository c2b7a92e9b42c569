//! The commands `tandem` runs instead of serving (`users`, `feedback`, `traces`), as the command line
//! gives them: plain values; each command runs where its work is (`auth::cli`,
//! `feedback_cli`), which reads them from here.

use clap::Subcommand;
use shared::feedback::Rating;

/// What `tandem` does besides serving.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
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
