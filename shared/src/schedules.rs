//! Schedules: runs nobody starts by hand. A schedule sends its message at each of its
//! times (a cron pattern in a time zone, one instant, or every so many seconds), in a new
//! session per fire or in one session; each scheduled time is recorded once, as fired,
//! missed or skipped (`GET /api/schedules/{schedule}/fires`).

use serde::{Deserialize, Serialize};

/// What a fire missed while the server was down (or the schedule paused) becomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum Misfire {
    /// Every late time is recorded as missed; nothing fires late.
    Skip,
    /// The latest late time within the window fires; the rest are recorded as missed.
    #[default]
    Once,
    /// Every late time within the window fires, in order; older ones are missed.
    All,
}

/// What a fire does while the previous fire's run still runs or waits for its person.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum Overlap {
    /// Recorded as skipped; nothing runs.
    #[default]
    Skip,
    /// The message waits in the session's queue, as a message sent during a run does
    /// (only with `sessionId`: each fire's own session has nothing to wait behind).
    Queue,
    /// The previous fire's run is stopped, then this one runs.
    Cancel,
}

/// A scheduled message: its text and the files it carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduledMessage {
    /// What the person would have typed.
    pub text: String,
    /// Attachments uploaded to the schedule's session (only with `sessionId`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<String>,
}

/// `POST /api/schedules`: a schedule as its person writes it (and `PATCH`'s fields).
/// Exactly one of `cron` (with `timezone`), `at` and `everySeconds`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduleInput {
    /// What the person calls it (1 to 200 characters); each fire's session is titled
    /// from it and the fire's time.
    pub name: String,
    /// The message each fire sends.
    pub message: ScheduledMessage,
    /// One session every fire sends to (absent: each fire starts a new session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// One of the server's models (absent: the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A cron pattern, five fields (minute hour day-of-month month day-of-week), or six
    /// with seconds first; `L`, `W` and `#` as croner reads them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    /// The IANA time zone the cron pattern's times are in (`Europe/Paris`); required
    /// with `cron`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// One instant (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// Every this many seconds: from `startAt` (its first fire), else from one interval
    /// after the schedule was made; at least the server's
    /// `--min-schedule-interval-seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_seconds: Option<u64>,
    /// No fire before this instant (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    /// No fire after this instant (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_at: Option<String>,
    /// Whether it fires (default true); a paused schedule's times are handled by
    /// `misfire` when it is resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Default `once`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misfire: Option<Misfire>,
    /// How late a missed time may still fire, in seconds (default 3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misfire_window_seconds: Option<u64>,
    /// Default `skip`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<Overlap>,
}

/// How a scheduled time was handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum FireStatus {
    /// Its message was sent: a run started (or its message was queued).
    Fired,
    /// Too late by the schedule's `misfire` policy (the server was down, or the schedule
    /// paused).
    Missed,
    /// Not sent: the previous fire's run still ran or waited (`overlap: skip`), or the
    /// schedule's session or model is gone, or its owner is over a budget.
    Skipped,
}

/// One scheduled time and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Fire {
    /// The time it was scheduled for (RFC 3339, UTC); a "run now" is its own time.
    pub scheduled_for: String,
    /// When its message was sent (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fired_at: Option<String>,
    pub status: FireStatus,
    /// The session its run is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The run it started (or will start, queued).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// How its run went: `running`, `waiting` (for its person), `answered` (it waited
    /// and its person answered), `cancelled` (stopped, or its question declined),
    /// `expired` (its question's deadline passed), `succeeded` or `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Why it was missed or skipped, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Started by "run now", not by the schedule's times.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub manual: bool,
}

/// A schedule as the API shows it: what its person wrote, with defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    pub id: String,
    pub name: String,
    pub message: ScheduledMessage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_at: Option<String>,
    pub enabled: bool,
    pub misfire: Misfire,
    pub misfire_window_seconds: u64,
    pub overlap: Overlap,
    /// Its next time not yet handled (RFC 3339, UTC); absent once none is left (an `at`
    /// that fired, a time past `endAt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_fire_at: Option<String>,
    /// The newest of its fires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_fire: Option<Fire>,
    pub created_at: String,
    pub updated_at: String,
}

/// `GET /api/schedules`: the caller's schedules, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ScheduleList {
    pub schedules: Vec<Schedule>,
}

/// `GET /api/schedules/{schedule}/fires`: newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FireList {
    pub fires: Vec<Fire>,
}

/// `GET /api/schedules/preview`: the next times of a cron pattern (RFC 3339, UTC).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SchedulePreview {
    pub times: Vec<String>,
}
