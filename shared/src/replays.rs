//! Replays: a recorded conversation's run sent again, k times per variant (another model,
//! another system prompt, another temperature), each trial a branch that parts just before
//! the run. What the run called and what its person answered are served from the record;
//! nothing with a side effect runs again. Each trial is scored against what the replay
//! expects, and each variant gets its pass^k (`POST /api/sessions/{id}/replays`,
//! `GET /api/replays/{id}`).

use serde::{Deserialize, Serialize};

/// The most trials per variant.
pub const MAX_K: u32 = 10;
/// The most variants per replay.
pub const MAX_VARIANTS: usize = 5;

/// What a trial's tool calls get.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum ToolsMode {
    /// A call the same as the recorded one at its place gets the recorded result without
    /// running; a different call runs only if its tool changes nothing (no approval,
    /// idempotent), else the trial stops there.
    #[default]
    Recorded,
    /// Tools that change nothing run again for a fresh result; a call of a tool that
    /// changes something or needs approval gets the recorded result when it is the same
    /// call, and stops the trial otherwise (a recorded side effect never runs again).
    Live,
}

/// What a trial's questions to its person get.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum AnswersMode {
    /// A question the same as the recorded one gets the recorded answer; another one stops
    /// the trial.
    #[default]
    Recorded,
    /// A question the same as the recorded one gets the recorded answer; another one waits
    /// for the person, as any question does.
    Ask,
}

/// One way to run the conversation again.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Variant {
    /// How the comparison names it (1 to 60 characters, unique in the replay).
    pub label: String,
    /// One of `GET /api/models` (absent: the model the run used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The system prompt instead of the server's (absent: the server's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The sampling temperature, 0 to 2 (absent: the provider's setting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
}

/// A model that grades each trial against a rubric.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Judge {
    /// One of `GET /api/models`.
    pub model: String,
    /// What a passing answer does, in words (1 to 4,000 characters).
    pub rubric: String,
}

/// What a trial's final answer must do to pass; every part given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expect {
    /// Texts the answer holds, each (case-sensitive).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains: Vec<String>,
    /// Texts the answer does not hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_contains: Vec<String>,
    /// A regular expression (Rust's `regex` syntax) the answer matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// A model's verdict against a rubric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<Judge>,
}

/// `POST /api/sessions/{id}/replays`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplayInput {
    /// The run to send again (absent: the last run a person's message started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// 1 to 5 ways to run it.
    pub variants: Vec<Variant>,
    /// Trials per variant, 1 to 10.
    pub k: u32,
    #[serde(default)]
    pub tools: ToolsMode,
    #[serde(default)]
    pub answers: AnswersMode,
    /// What passing means (absent: a trial passes when it finishes without an error and
    /// without being stopped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
    /// No trial starts once the trials so far cost this much (US dollars).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
}

/// How far a trial is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum TrialStatus {
    /// Waiting for its turn (`--replay-concurrency` trials of a replay run at once).
    Queued,
    /// Its run goes on.
    Running,
    /// Its run asks its person something the record does not answer (`answers: ask`).
    Waiting,
    /// Its run finished.
    Finished,
    /// Its run stopped: a call or question it made differs from the record and may not run
    /// again, or it failed.
    Stopped,
    /// Never ran: the replay was cancelled, or its `maxCostUsd` was reached.
    Skipped,
    /// Stopped by a cancel of the replay.
    Cancelled,
}

/// Tokens a trial used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TrialUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A judge's verdict on a trial.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub model: String,
    pub passed: bool,
    /// Why, in the judge's words.
    pub reason: String,
}

/// One trial of a variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Trial {
    /// 1 to k.
    pub trial: u32,
    /// The trial's branch (absent while it is queued or if it never ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub status: TrialStatus,
    /// Whether it did what the replay expects (absent until it ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
    /// Why it failed, stopped or was skipped, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The seq in the trial's branch of the first tool call or question that differs from
    /// the record (its `TOOL_CALL_START`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diverged_at_seq: Option<u64>,
    /// The text of its last answer.
    #[serde(default)]
    pub final_text: String,
    #[serde(default)]
    pub usage: TrialUsage,
    /// What its model calls (the judge's included) cost, where prices are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// From its first `RUN_STARTED` to its last run's end (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u64>,
    /// From its first `RUN_STARTED` to its first answer token (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

/// A variant's trials and scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct VariantResult {
    pub label: String,
    /// The model its trials called.
    pub model: String,
    pub trials: Vec<Trial>,
    /// Trials that passed.
    pub passes: u32,
    /// Passes over trials scored (absent before any is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_at1: Option<f64>,
    /// 1 when all k trials passed, 0 when one did not (absent until that is known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_hat_k: Option<f64>,
}

/// Whether a replay still has trials to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub enum ReplayStatus {
    Running,
    Done,
    Cancelled,
}

/// `GET /api/replays/{id}`, and `POST`'s 202.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Replay {
    pub id: String,
    /// The conversation replayed.
    pub session_id: String,
    /// The run replayed.
    pub run_id: String,
    pub status: ReplayStatus,
    /// The recorded run's last answer, which trials are compared with.
    pub recorded_text: String,
    pub variants: Vec<VariantResult>,
    /// When it was made (RFC 3339).
    pub created_at: String,
}

/// `GET /api/sessions/{id}/replays`: a conversation's replays, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReplayList {
    pub replays: Vec<Replay>,
}

/// What `CUSTOM tandem.replay` records at the start of a trial's run: which replay,
/// variant and trial it is, where its record is, and what it changes of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayMark {
    pub replay_id: String,
    pub variant: String,
    pub trial: u32,
    /// The session whose log holds the recorded run.
    pub source_session_id: String,
    /// The recorded run's `RUN_STARTED` and the last event of what it recorded (its
    /// continuations after answers included).
    pub from_seq: u64,
    pub to_seq: u64,
    #[serde(default)]
    pub tools: ToolsMode,
    #[serde(default)]
    pub answers: AnswersMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
}

/// What `CUSTOM tandem.replay_diverged` records: the trial's first call that differs from
/// the record at its place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Diverged {
    pub tool_call_id: String,
    pub tool_call_name: String,
    /// The recorded call at that place (absent: the record made no more calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_name: Option<String>,
}

/// pass@1 and pass^k of trials' outcomes (`None`: not scored yet): pass@1 is the share
/// of scored trials that passed; pass^k is 1 when all `k` passed and 0 as soon as one
/// failed (unknown while some are not scored and none failed).
pub fn scores(passed: &[Option<bool>], k: u32) -> (u32, Option<f64>, Option<f64>) {
    let passes = passed.iter().filter(|p| **p == Some(true)).count() as u32;
    let scored = passed.iter().filter(|p| p.is_some()).count() as u32;
    let pass_at1 = (scored > 0).then(|| f64::from(passes) / f64::from(scored));
    let pass_hat_k = if passed.contains(&Some(false)) {
        Some(0.0)
    } else if passes >= k {
        Some(1.0)
    } else {
        None
    };
    (passes, pass_at1, pass_hat_k)
}

#[cfg(test)]
mod tests {
    use super::scores;

    #[test]
    fn pass_hat_k_needs_every_trial_and_one_failure_decides_it() {
        assert_eq!(scores(&[Some(true); 3], 3), (3, Some(1.0), Some(1.0)));
        assert_eq!(
            scores(&[Some(true), Some(false), None], 3),
            (1, Some(0.5), Some(0.0))
        );
        assert_eq!(scores(&[Some(true), None, None], 3), (1, Some(1.0), None));
        assert_eq!(scores(&[None, None], 2), (0, None, None));
    }
}
