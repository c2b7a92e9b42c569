//! Replays and their trials (`POST /api/sessions/{id}/replays`): each replay's row, claimed
//! by the instance that drives its trials, and each trial's row, from queued to ended with
//! its result. What a trial did is in its branch's log; its row keeps where that is and,
//! once it ended, the result read from it.

use std::future::Future;

use super::StoreError;
use crate::domain::UserId;

/// A replay as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayRow {
    pub id: String,
    pub owner: UserId,
    /// The session replayed.
    pub session_id: String,
    pub run_id: String,
    /// The eval it is one conversation of, if any.
    pub eval_id: Option<String>,
    /// The request, defaults filled in (JSON).
    pub spec: String,
    /// Where the run lies in its session's log and what it said (JSON).
    pub record: String,
    /// `running`, `done` or `cancelled`.
    pub status: String,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

/// An eval as kept: its request, and the conversations it could not replay (JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalRow {
    pub id: String,
    pub owner: UserId,
    pub spec: String,
    pub skipped: String,
    pub created_at: i64,
}

/// A trial as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialRow {
    pub replay_id: String,
    /// The variant's place in the replay (0 first).
    pub variant: u32,
    /// 1 to k.
    pub trial: u32,
    /// Its branch, once it started.
    pub session_id: Option<String>,
    /// `queued`, `started`, `ended` or `skipped`.
    pub state: String,
    /// Once it ended (or was skipped): the trial as scored (JSON).
    pub result: Option<String>,
}

/// Keeping replays and their trials.
pub trait Replays: Send + Sync + 'static {
    /// Keeps a new replay with `trials` per variant (`variants` of them), all queued.
    fn add_replay(
        &self,
        row: &ReplayRow,
        variants: u32,
        trials: u32,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// `owner`'s replay `id` (another's is none).
    fn replay(
        &self,
        owner: UserId,
        id: &str,
    ) -> impl Future<Output = Result<Option<ReplayRow>, StoreError>> + Send;

    /// A replay by id, whoever's (for the instance that drives it).
    fn replay_by_id(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<ReplayRow>, StoreError>> + Send;

    /// `owner`'s replays of `session`, newest first, at most `limit`.
    fn replays_of(
        &self,
        owner: UserId,
        session: &str,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<ReplayRow>, StoreError>> + Send;

    /// Keeps a new eval (its replays are added after it, naming it).
    fn add_eval(&self, row: &EvalRow) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// `owner`'s eval `id` (another's is none).
    fn eval(
        &self,
        owner: UserId,
        id: &str,
    ) -> impl Future<Output = Result<Option<EvalRow>, StoreError>> + Send;

    /// `owner`'s evals, newest first, at most `limit`.
    fn evals_of(
        &self,
        owner: UserId,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<EvalRow>, StoreError>> + Send;

    /// The replays of eval `id`, oldest first.
    fn replays_of_eval(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Vec<ReplayRow>, StoreError>> + Send;

    /// Whether `session` is a replay's trial (a branch the session list does not show as
    /// its conversation's line).
    fn is_trial(&self, session: &str) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// A replay's trials, by variant and trial.
    fn trials(
        &self,
        replay: &str,
    ) -> impl Future<Output = Result<Vec<TrialRow>, StoreError>> + Send;

    /// Claims a running replay for `instance` until `until_ms`, if no other instance
    /// holds it at `now_ms`; whether it is this instance's now.
    fn claim_replay(
        &self,
        id: &str,
        instance: &str,
        now_ms: i64,
        until_ms: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Lets go of this instance's claim on a replay (another may drive it at once).
    fn release_replay(
        &self,
        id: &str,
        instance: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Running replays nobody holds at `now_ms`, oldest first, at most `limit`.
    fn unclaimed_replays(
        &self,
        now_ms: i64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Starts a queued trial (`number`: its variant and trial) in the branch `session`;
    /// false if it is no longer queued.
    fn start_trial(
        &self,
        replay: &str,
        number: (u32, u32),
        session: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Puts a trial started in the branch `session` back in the queue (its start failed
    /// for a while: the database was busy, the run queues full); false if it moved on.
    fn requeue_trial(
        &self,
        replay: &str,
        number: (u32, u32),
        session: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Ends a trial that is queued or started, as `state` (`ended` or `skipped`), with
    /// its result; false if it had ended already.
    fn end_trial(
        &self,
        replay: &str,
        number: (u32, u32),
        state: &str,
        result: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Sets a running replay's status (`done`, `cancelled`); false if it was not running
    /// (or, for `done`, a trial of it is still queued or started).
    fn finish_replay(
        &self,
        id: &str,
        status: &str,
        now_ms: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}
