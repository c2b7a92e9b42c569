//! Evals: the same replay (`shared::replays`) over many recorded conversations at once
//! (`POST /api/evals`), with a table per variant (pass^k, pass@1, tokens, cost, latency)
//! and per conversation (`GET /api/evals/{id}`). Without `expect`, a judge compares each
//! trial with its conversation's own recorded answer.

use serde::{Deserialize, Serialize};

use crate::replays::{AnswersMode, Expect, ToolsMode, Variant};

/// The most conversations one eval replays.
pub const MAX_CONVERSATIONS: usize = 50;

/// Which conversations an eval replays, when it does not list them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvalFilter {
    /// Conversations whose answer the person rated so (`up` or `down`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<crate::feedback::Rating>,
    /// Conversations updated at or after this instant (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Conversations whose title contains this (any case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_contains: Option<String>,
}

/// `POST /api/evals`: exactly one of `sessions` and `filter`, and a replay's fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvalInput {
    /// The conversations to replay (1 to 50 session ids: each conversation's line named).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<EvalFilter>,
    pub variants: Vec<Variant>,
    pub k: u32,
    #[serde(default)]
    pub tools: ToolsMode,
    #[serde(default)]
    pub answers: AnswersMode,
    /// What passing means (absent: a judge, the server's default model, compares each
    /// trial's answer with the conversation's recorded one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
    /// No trial of a conversation starts once its trials cost this much (US dollars).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
}

/// A variant over every conversation of an eval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EvalVariant {
    pub label: String,
    pub model: String,
    /// The conversations whose pass^k is known.
    pub conversations: u32,
    /// The mean of the conversations' pass^k (absent before one is known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_hat_k: Option<f64>,
    /// The share of scored trials that passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_at1: Option<f64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The trials' latency, p50 (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms_p50: Option<u64>,
}

/// One variant's score on one conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EvalCell {
    pub label: String,
    pub passes: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_at1: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_hat_k: Option<f64>,
}

/// One conversation of an eval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EvalConversation {
    pub session_id: String,
    pub title: String,
    /// Its replay (absent when it could not be replayed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_id: Option<String>,
    /// Why it was not replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub variants: Vec<EvalCell>,
}

/// `GET /api/evals/{id}`, and `POST`'s 202.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Eval {
    pub id: String,
    pub status: crate::replays::ReplayStatus,
    pub k: u32,
    pub variants: Vec<EvalVariant>,
    pub conversations: Vec<EvalConversation>,
    /// When it was made (RFC 3339).
    pub created_at: String,
}

/// `GET /api/evals`: the caller's evals, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EvalList {
    pub evals: Vec<Eval>,
}
