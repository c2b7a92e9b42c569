//! Schedules and their fires (`POST /api/schedules`): each schedule's row with its next
//! time not yet handled, claimed by one instance at a time while it handles its due times;
//! each scheduled time's fire, once (unique on schedule and time). A fire that starts a
//! run is written by the run's guard, in the same transaction as its first events
//! (`store/sql/guards.rs`); a missed or skipped one here.

use std::future::Future;

use super::StoreError;
use crate::domain::UserId;

/// A schedule as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleRow {
    pub id: String,
    pub owner: UserId,
    pub name: String,
    /// The schedule as its person wrote it, defaults filled in (JSON).
    pub spec: String,
    pub enabled: bool,
    /// Its next time not yet handled (ms); `None` once none is left.
    pub next_fire_at: Option<i64>,
    /// Moves with every change its person makes.
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// What became of one scheduled time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FireRow {
    pub schedule_id: String,
    /// The time it was scheduled for (ms); a "run now" is its own time.
    pub scheduled_for: i64,
    /// `fired`, `missed` or `skipped`.
    pub status: String,
    pub fired_at: Option<i64>,
    pub session_id: Option<String>,
    pub run_id: Option<String>,
    /// Its run's outcome as read: `running`, `waiting`, `answered`, `succeeded`,
    /// `failed`, `cancelled` (none for a fire that started nothing).
    pub outcome: Option<String>,
    /// Why it was missed or skipped.
    pub reason: Option<String>,
    pub manual: bool,
}

/// A fire a run's start records, in the same transaction as its events (the guard's
/// write): it is refused if the time already has a fire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FireClaim {
    pub schedule_id: String,
    pub scheduled_for: i64,
    /// When it fires, by the scheduler's clock (ms).
    pub fired_at: i64,
    pub manual: bool,
}

/// The changes of a schedule its person makes (`PATCH`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleChange {
    pub name: String,
    pub spec: String,
    pub enabled: bool,
    pub next_fire_at: Option<i64>,
}

/// Keeping schedules and their fires.
pub trait Schedules: Send + Sync + 'static {
    /// `owner`'s schedules, oldest first.
    fn schedules(
        &self,
        owner: UserId,
    ) -> impl Future<Output = Result<Vec<ScheduleRow>, StoreError>> + Send;

    /// `owner`'s schedule `id` (another's is none).
    fn schedule(
        &self,
        owner: UserId,
        id: &str,
    ) -> impl Future<Output = Result<Option<ScheduleRow>, StoreError>> + Send;

    /// Adds a schedule.
    fn add_schedule(
        &self,
        row: &ScheduleRow,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Changes `owner`'s schedule `id` (its version moves); the row as it now is.
    fn change_schedule(
        &self,
        owner: UserId,
        id: &str,
        change: &ScheduleChange,
        now_ms: i64,
    ) -> impl Future<Output = Result<Option<ScheduleRow>, StoreError>> + Send;

    /// Deletes `owner`'s schedule `id` and its fires; says whether there was one.
    fn delete_schedule(
        &self,
        owner: UserId,
        id: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Claims, for `instance` until `until_ms`, up to `limit` enabled schedules of owners
    /// not revoked whose next time is at or before `now_ms` and that no other instance
    /// holds; returns them, earliest first.
    fn claim_due_schedules(
        &self,
        instance: &str,
        now_ms: i64,
        until_ms: i64,
        limit: i64,
    ) -> impl Future<Output = Result<Vec<ScheduleRow>, StoreError>> + Send;

    /// Hands back `instance`'s claim of schedule `id`, its next time moved to `next` if
    /// its person changed nothing since it was claimed (`version`).
    fn settle_schedule(
        &self,
        id: &str,
        instance: &str,
        version: i64,
        next: Option<i64>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// When the scheduler should look next: the earliest next time of the enabled
    /// schedules of owners not revoked (or the end of the claim that holds it).
    fn next_schedule_due(&self) -> impl Future<Output = Result<Option<i64>, StoreError>> + Send;

    /// Records a missed or skipped time; false if the time already has a fire.
    fn record_fire(&self, fire: &FireRow) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Schedule `id`'s fires, newest first, at most `limit`.
    fn fires(
        &self,
        id: &str,
        limit: i64,
    ) -> impl Future<Output = Result<Vec<FireRow>, StoreError>> + Send;

    /// The newest fire of schedule `id` that sent its message.
    fn last_fired(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<FireRow>, StoreError>> + Send;
}
