//! Limits that keep one user, one run or one hostile input from taking the server down.
//! Every one has a default that suits a team on one box and a documented error when hit.

use clap::Args;

/// Limit flags and environment variables.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Largest REST request body, in bytes (413 `payload_too_large` beyond).
    #[arg(long, env = "TANDEM_MAX_BODY_BYTES", default_value_t = 64 * 1024,
          value_parser = clap::value_parser!(u32).range(1024..=16 * 1024 * 1024))]
    pub max_body_bytes: u32,
    /// How long a request's body may go without bringing at least 1 KiB (or the rest of
    /// itself) while the server reads it, in milliseconds (408 `request_timeout`, and the
    /// connection is closed).
    #[arg(long, env = "TANDEM_BODY_TIMEOUT_MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(100..=3_600_000))]
    pub body_timeout_ms: u64,
    /// Largest socket message, in bytes (the socket closes with 1009 beyond).
    #[arg(long, env = "TANDEM_MAX_FRAME_BYTES", default_value_t = 64 * 1024,
          value_parser = clap::value_parser!(u32).range(1024..=16 * 1024 * 1024))]
    pub max_frame_bytes: u32,
    /// Longest user message, in bytes (422 `invalid_message` beyond).
    #[arg(long, env = "TANDEM_MAX_MESSAGE_BYTES", default_value_t = 32 * 1024,
          value_parser = clap::value_parser!(u32).range(1..=16 * 1024 * 1024))]
    pub max_message_bytes: u32,
    /// Largest attachment, in bytes (413 `payload_too_large` beyond).
    #[arg(long, env = "TANDEM_MAX_ATTACHMENT_BYTES", default_value_t = 20 * 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_attachment_bytes: u64,
    /// What one user's attachments may take together, in bytes (413
    /// `attachment_quota_exceeded` beyond).
    #[arg(long, env = "TANDEM_ATTACHMENT_QUOTA_BYTES", default_value_t = 1024 * 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub attachment_quota_bytes: u64,
    /// How long an upload may stop moving before it counts as abandoned and its bytes are
    /// purged, in milliseconds (the purge runs every quarter of it, at most every minute).
    #[arg(long, env = "TANDEM_ATTACHMENT_STALL_MS", default_value_t = 120_000,
          value_parser = clap::value_parser!(u64).range(100..), hide = true)]
    pub attachment_stall_ms: u64,
    /// Sessions one user may create per minute (429 `rate_limited` beyond).
    #[arg(long, env = "TANDEM_SESSIONS_PER_MINUTE", default_value_t = 60,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub sessions_per_minute: u32,
    /// Messages one user may send per minute, over REST and sockets together (429).
    #[arg(long, env = "TANDEM_MESSAGES_PER_MINUTE", default_value_t = 120,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub messages_per_minute: u32,
    /// Sockets one user may have open at once (429 `too_many_sockets` beyond).
    #[arg(long, env = "TANDEM_SOCKETS_PER_USER", default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub sockets_per_user: u32,
    /// Runs that execute at once across the server; more wait, queued in the log.
    #[arg(long, env = "TANDEM_MAX_CONCURRENT_RUNS", default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_runs: u32,
    /// Runs that may wait for a slot; past this, new work gets 503 `saturated`.
    #[arg(long, env = "TANDEM_MAX_QUEUED_RUNS", default_value_t = 1000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_queued_runs: u32,
    /// Model calls one run may make before it fails with `max_model_calls`.
    #[arg(long, env = "TANDEM_MAX_MODEL_CALLS", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_model_calls: u32,
    /// Events one run may append before it fails with `max_run_events`.
    #[arg(long, env = "TANDEM_MAX_RUN_EVENTS", default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(10..))]
    pub max_run_events: u64,
    /// Largest tool result kept in the log, in bytes; longer ones are truncated with a
    /// marker the model and the page see.
    #[arg(long, env = "TANDEM_MAX_TOOL_RESULT_BYTES", default_value_t = 64 * 1024,
          value_parser = clap::value_parser!(u32).range(256..))]
    pub max_tool_result_bytes: u32,
    /// Largest JSON Schema a model may put in a question (`request_input`'s `schema`), in
    /// bytes.
    #[arg(long, env = "TANDEM_MAX_SCHEMA_BYTES", default_value_t = 16 * 1024,
          value_parser = clap::value_parser!(u32).range(64..))]
    pub max_schema_bytes: u32,
    /// Deepest nesting of such a schema.
    #[arg(long, env = "TANDEM_MAX_SCHEMA_DEPTH", default_value_t = 12,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub max_schema_depth: u32,
    /// Bytes each user's workspace folder may hold (the file tools refuse writes beyond).
    #[arg(long, env = "TANDEM_WORKSPACE_QUOTA_BYTES", default_value_t = 100 * 1024 * 1024)]
    pub workspace_quota_bytes: u64,
    /// Share links one session may have (409 `too_many_share_links` beyond).
    #[arg(long, env = "TANDEM_MAX_SHARES_PER_SESSION", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_shares_per_session: u32,
    /// Share links one user may create per minute (429 `rate_limited` beyond).
    #[arg(long, env = "TANDEM_SHARES_PER_MINUTE", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub shares_per_minute: u32,
    /// Tools one user may upload per minute (`PUT /api/tools/{name}`; each is compiled,
    /// which takes a while for a large module; 429 `rate_limited` beyond).
    #[arg(long, env = "TANDEM_TOOL_UPLOADS_PER_MINUTE", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub tool_uploads_per_minute: u32,
    /// Sockets open at once through the share links of one session, all links together
    /// (429 `too_many_sockets` beyond).
    #[arg(long, env = "TANDEM_VIEWER_SOCKETS_PER_SESSION", default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub viewer_sockets_per_session: u32,
    /// Sockets open at once through the share links of all one user's sessions (429
    /// `too_many_sockets` beyond).
    #[arg(long, env = "TANDEM_VIEWER_SOCKETS_PER_OWNER", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub viewer_sockets_per_owner: u32,
    /// Runs one user may have waiting for a slot; past this, that user's new work gets
    /// 429 `too_many_queued_runs` while others still queue (`--max-queued-runs` bounds
    /// the whole queue).
    #[arg(long, env = "TANDEM_MAX_QUEUED_RUNS_PER_USER", default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_queued_runs_per_user: u32,
    /// Largest `context` of an AG-UI input, as JSON bytes (422 `invalid_message` beyond).
    #[arg(long, env = "TANDEM_MAX_AGUI_CONTEXT_BYTES", default_value_t = 32 * 1024,
          value_parser = clap::value_parser!(u32).range(2..))]
    pub max_agui_context_bytes: u32,
    /// Largest `state` of an AG-UI input, as JSON bytes (422 beyond; an object is logged
    /// and becomes the session's shared state).
    #[arg(long, env = "TANDEM_MAX_AGUI_STATE_BYTES", default_value_t = 64 * 1024,
          value_parser = clap::value_parser!(u32).range(2..))]
    pub max_agui_state_bytes: u32,
    /// Largest shared state, as JSON bytes: a change that would make it larger is refused.
    #[arg(long, env = "TANDEM_MAX_STATE_BYTES", default_value_t = 64 * 1024,
          value_parser = clap::value_parser!(u32).range(2..))]
    pub max_state_bytes: u32,
    /// Largest `forwardedProps` of an AG-UI input, as JSON bytes (422 beyond; it is not
    /// logged).
    #[arg(long, env = "TANDEM_MAX_AGUI_FORWARDED_PROPS_BYTES", default_value_t = 16 * 1024,
          value_parser = clap::value_parser!(u32).range(2..))]
    pub max_agui_forwarded_props_bytes: u32,
    /// Largest `tools` of an AG-UI input (all its tool definitions together), as JSON
    /// bytes (422 beyond).
    #[arg(long, env = "TANDEM_MAX_AGUI_TOOLS_BYTES", default_value_t = 64 * 1024,
          value_parser = clap::value_parser!(u32).range(2..))]
    pub max_agui_tools_bytes: u32,
    /// Bytes of AG-UI input one user's runs may add to the log per minute (429
    /// `rate_limited` beyond).
    #[arg(long, env = "TANDEM_AGUI_INPUT_BYTES_PER_MINUTE", default_value_t = 4 * 1024 * 1024,
          value_parser = clap::value_parser!(u32).range(1024..))]
    pub agui_input_bytes_per_minute: u32,
}
