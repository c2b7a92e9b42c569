//! REST request and response bodies of `/api`.
//!
//! Errors always have the shape `{"error": {"code", "message", "details"?}}`.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::agui::{Event, Interrupt};
use crate::envelope::ResumeStatus;
use crate::fields::{read_object, unknown_variant};

/// Where a session stands, derived from its event log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// No run is active and nothing is awaited.
    Idle,
    /// A run is producing events.
    Running,
    /// A run paused on a question for a person.
    AwaitingInput,
}

impl SessionStatus {
    /// The wire (and database) spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Running => "running",
            Self::AwaitingInput => "awaiting_input",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "idle" => Some(Self::Idle),
            "running" => Some(Self::Running),
            "awaiting_input" => Some(Self::AwaitingInput),
            _ => None,
        }
    }
}

/// `POST /api/sessions/{id}/fork` body.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForkSession {
    /// The last event the branch shares: 0, or the seq of a run's `RUN_FINISHED` or
    /// `RUN_ERROR`.
    pub at_seq: u64,
    /// The branch's title (else the parent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 200, pattern = r"\S")
    )]
    pub title: Option<String>,
}

/// `POST /api/sessions/{id}/messages/{messageId}/edit` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditMessage {
    /// The message as it should have been (the limits of `PostMessage.text`).
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 8192, pattern = r"\S")
    )]
    pub text: String,
    /// The attachments the edited message carries (ids); the original's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_items = 10))]
    pub attachments: Option<Vec<String>>,
}

/// `POST /api/sessions/{id}/runs/{runId}/regenerate` body (may be empty).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Regenerate {
    /// A model of `GET /api/models` for the new run and the branch's later ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// `POST /api/sessions/{id}/runs/{runId}/continue` body (may be empty).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContinueRun {
    /// The caller's id for the request: a repeat starts nothing new and gets the run the
    /// first one started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 128))]
    pub client_message_id: Option<String>,
}

/// An edit's or a regeneration's answer: the branch it made, and the run it started there.
/// Read from JSON by hand ([`crate::fields`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BranchStarted {
    #[serde(flatten)]
    pub session: SessionSummary,
    pub run_id: String,
}

/// `POST /api/sessions` body (every field optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSession {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 200, pattern = r"\S")
    )]
    pub title: Option<String>,
}

/// A session as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub id: String,
    pub title: String,
    pub status: SessionStatus,
    pub last_seq: u64,
    pub created_at: i64,
    pub updated_at: i64,
    /// For a branch: the session it parts from (its history is that one's up to
    /// `forkSeq`, then its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// For a branch: the last seq it shares with `parentId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_seq: Option<u64>,
    /// The conversation it is a line of: the first line's id (its own `id` on that line).
    /// The list shows each conversation once, by its most recently updated line.
    pub conversation_id: String,
    /// In a search's results: a piece of the latest message that matched, around the
    /// match (absent when only the title matched, and outside a search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

/// `GET /api/sessions/{id}/branches`: every line of the session's conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BranchList {
    /// Oldest first; each but the first line has `parentId` and `forkSeq`.
    pub branches: Vec<SessionSummary>,
}

/// `GET /api/sessions/{id}`: the summary plus the questions waiting for an answer. Read
/// from JSON by hand ([`crate::fields`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionDetail {
    #[serde(flatten)]
    pub summary: SessionSummary,
    pub pending_interrupts: Vec<Interrupt>,
}

/// `GET /api/sessions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionList {
    pub sessions: Vec<SessionSummary>,
}

/// One message of `GET /api/sessions/stream`, the caller's session list as it changes
/// (each the `data:` of one Server-Sent Event). The stream opens with a `snapshot` (what
/// `GET /api/sessions` answers), then tells each change; after a `snapshot` the list is
/// exactly that snapshot (one is sent again whenever changes may have been missed). Read
/// from JSON by hand ([`crate::fields`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SessionListEvent {
    /// The whole list, newest first.
    Snapshot { sessions: Vec<SessionSummary> },
    /// A session was created, renamed, or its status changed (a run started, paused for a
    /// person, ended): its row as it stands now. The list shows each conversation once
    /// (`conversationId`), by its most recently updated line: this row takes its
    /// conversation's place unless the one there was updated later.
    Changed { session: SessionSummary },
    /// A session was deleted (by any tab, instance or retention). When it was a branch the
    /// list showed, a `snapshot` comes instead (another line of its conversation shows).
    Removed { id: String },
}

/// One logged event with its sequence number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LoggedEvent {
    pub seq: u64,
    /// An AG-UI event (`type` and its fields).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub event: Event,
}

/// `GET /api/sessions/{id}/events?after=&limit=`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EventPage {
    pub events: Vec<LoggedEvent>,
    /// The session's last committed seq when the page was read.
    pub last_seq: u64,
}

/// `POST /api/sessions/{id}/messages` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PostMessage {
    /// Not blank unless `attachments` names a file; at most 32 KiB of UTF-8 by default
    /// (`--max-message-bytes`).
    #[cfg_attr(feature = "openapi", schema(max_length = 8192))]
    pub text: String,
    /// Makes a retried send idempotent: the same id gets the run it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 128))]
    pub client_message_id: Option<String>,
    /// A model of `GET /api/models` for this run and the session's later ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What the message does if a run is active or a question waits (the server's
    /// `--while-running`, `queue` unless set otherwise, when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub while_running: Option<crate::queue::WhileRunning>,
    /// Ids of attachments uploaded to this session (or a line it branched from), at
    /// most 10, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(max_items = 10))]
    pub attachments: Vec<String>,
}

/// `GET /api/models`: the models a session may run on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ModelList {
    /// The engine they run on (`openai`, `anthropic`, `demo`, …).
    pub engine: String,
    /// The model a session runs on until one is picked.
    pub default: String,
    /// Every model a session may pick, the default first.
    pub models: Vec<String>,
    /// Those of `models` that take no images nor PDFs: they get a short note in place of
    /// each (`--models-without-images`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub without_images: Vec<String>,
}

/// `POST /api/sessions/{id}/interrupts/{interruptId}` body. `interruptId` may be
/// repeated in the body; if it is, it must match the path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResumeBody {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupt_id: Option<String>,
    pub status: ResumeStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
}

/// The reply to an accepted message or answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RunAccepted {
    /// The run the message or answer started (or already started, for a repeat).
    pub run_id: String,
    /// True when this repeated an earlier, identical request and changed nothing.
    #[serde(default)]
    pub duplicate: bool,
    /// Set when the message waits instead of starting a run at once (a run was active):
    /// queued, or steering the active run. `runId` is then the run it starts when its
    /// turn comes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued: Option<crate::queue::QueuedMessage>,
}

impl RunAccepted {
    /// A run started (or, `duplicate`, started earlier by the same request).
    pub fn started(run_id: String, duplicate: bool) -> Self {
        Self {
            run_id,
            duplicate,
            queued: None,
        }
    }
}

/// `GET /api/info`: what this server runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    /// The engine kind: `demo`, `script`, ….
    pub engine: String,
    /// The model's display name.
    pub model: String,
    /// Tandem's version.
    pub version: String,
    /// The MCP servers of `--mcp-config` and where each stands (absent without any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<McpServerInfo>,
}

/// One MCP server as `GET /api/info` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpServerInfo {
    pub name: String,
    /// Whether Tandem is connected to it now.
    pub connected: bool,
    /// How many tools it offers (0 while not connected).
    pub tools: usize,
    /// Why it is not connected (absent while it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `POST /api/auth/login` body: an API token to exchange for the sign-in cookie.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoginBody {
    pub token: String,
}

/// `GET /api/auth/me` (and the reply to a sign-in): who the caller is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CurrentUser {
    pub id: String,
    pub name: String,
    /// The server's mode: `none` (nobody signs in) or `token`.
    pub auth: String,
    /// How this request proved who it is: `none`, `token` or `cookie`.
    pub signed_in_with: String,
    /// The caller's budgets and what is left of each (none: no limit applies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budget: Vec<crate::budget::BudgetLine>,
}

/// The body of every error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What went wrong, machine- and human-readable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorDetail {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl<'de> Deserialize<'de> for SessionDetail {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_object(deserializer, |f| {
            Ok(Self {
                pending_interrupts: f.typed("pendingInterrupts")?,
                summary: f.rest()?,
            })
        })
    }
}

impl<'de> Deserialize<'de> for BranchStarted {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_object(deserializer, |f| {
            Ok(Self {
                run_id: f.string("runId")?,
                session: f.rest()?,
            })
        })
    }
}

impl<'de> Deserialize<'de> for SessionListEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_object(deserializer, |f| {
            let kind = f.string("type")?;
            Ok(match kind.as_str() {
                "snapshot" => Self::Snapshot {
                    sessions: f.typed("sessions")?,
                },
                "changed" => Self::Changed {
                    session: f.typed("session")?,
                },
                "removed" => Self::Removed {
                    id: f.string("id")?,
                },
                other => return Err(unknown_variant(other, &["snapshot", "changed", "removed"])),
            })
        })
    }
}
