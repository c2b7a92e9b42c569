//! Schedules: runs nobody starts by hand.
//!
//! A schedule (`spec.rs`: a cron pattern in an IANA time zone, one instant, or an
//! interval; its bounds and policies) sends its message at each of its times, as its
//! owner's message: in a new session per fire (named by the schedule and the time, so a
//! fire made again names the same session) or in one session. Each instance runs one
//! [`Scheduler`] task that sleeps until the earliest next time of any schedule (or until
//! a schedule changes, here or, through the change feed, on another instance), then
//! claims the due schedules no other instance holds and handles their due times:
//! `due.rs` decides which fire and which are missed (`misfire`), `fire.rs` sends each
//! (`overlap`). A time's fire is recorded once: a fire that sends its message is written
//! by the guard of the transaction that starts its run (or queues its message), refused
//! if the time already has a fire, so two instances, or one before and after a crash,
//! never send it twice. `edit.rs` makes and changes schedules (for the routes and
//! `tandem schedules`), `shape.rs` shows them as the API does.

mod cli;
mod due;
mod edit;
mod fire;
mod shape;
pub mod spec;

use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::Notify;

use crate::agent::{Refusal, Runner};
use crate::domain::Clock;
use crate::lifecycle::Lifecycle;
use crate::store::{ScheduleRow, Store, StoreError};

pub use cli::{run_command, SchedulesOn};
pub use edit::{create, patch, preview};
pub use shape::{fire_view, schedule_view};
pub use spec::Rules;

/// The most schedules one claim takes.
const CLAIM_BATCH: i64 = 256;
/// How many claimed schedules are handled at once.
const CONCURRENT: usize = 32;
/// How long the scheduler waits, in the machine's time, before it handles again the
/// schedules a pass failed on (their claims handed back).
const RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(1);
/// The longest the scheduler sleeps without looking (a schedule added from the shell to
/// a SQLite database, which no change feed announces, is seen within this).
const LONGEST_SLEEP_MS: i64 = 60_000;

/// Wakes the scheduler of this instance: a schedule changed.
#[derive(Clone, Default)]
pub struct Wake(Arc<Notify>);

impl Wake {
    /// The scheduler looks again for its next time.
    pub fn wake(&self) {
        self.0.notify_one();
    }
}

/// This instance's scheduler.
pub struct Scheduler<S> {
    store: Arc<S>,
    runner: Runner<S>,
    clock: Clock,
    rules: Rules,
    /// This instance's name in its claims.
    instance: String,
    /// How long it holds the schedules it claims: another instance takes them over after
    /// this if it dies (what it fired is recorded, so nothing is sent twice). An instance's
    /// run lease: the time it is trusted to be alive.
    claim_ms: i64,
    wake: Wake,
}

impl<S> Clone for Scheduler<S> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            runner: self.runner.clone(),
            clock: self.clock.clone(),
            rules: self.rules.clone(),
            instance: self.instance.clone(),
            claim_ms: self.claim_ms,
            wake: self.wake.clone(),
        }
    }
}

impl<S: Store> Scheduler<S> {
    /// A scheduler of `runner`'s runs on `clock`, holding what it claims for `claim_ms`.
    pub fn new(
        store: Arc<S>,
        runner: Runner<S>,
        clock: Clock,
        rules: Rules,
        claim_ms: u64,
    ) -> Self {
        Self {
            store,
            runner,
            clock,
            rules,
            instance: crate::domain::new_id("sched"),
            claim_ms: claim_ms.max(1) as i64,
            wake: Wake::default(),
        }
    }

    /// What wakes this scheduler (the routes and the relay hold one).
    pub fn waker(&self) -> Wake {
        self.wake.clone()
    }

    /// What schedules are checked against.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The scheduler's clock.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Starts the task that fires the schedules; it ends when the process stops.
    pub fn spawn(&self, lifecycle: &Lifecycle) {
        let scheduler = self.clone();
        let ending = lifecycle.halting().clone();
        lifecycle.spawn(async move {
            // A stopping process claims nothing more (a claim it could not settle would
            // hold the schedule from the next instance until it lapsed).
            while !ending.is_cancelled() {
                let now = scheduler.clock.now_ms();
                let (more, failed) = match scheduler.pass(now).await {
                    Ok(passed) => passed,
                    Err(error) => {
                        tracing::warn!(%error, "the scheduler could not read its schedules");
                        (false, true)
                    }
                };
                if failed {
                    // A moment of the machine's own time (the schedules' clock may stand
                    // still), then the failed ones again.
                    tokio::select! {
                        biased;
                        () = ending.cancelled() => return,
                        () = tokio::time::sleep(RETRY_AFTER) => {}
                    }
                    continue;
                }
                if more {
                    continue;
                }
                let next = match scheduler.store.next_schedule_due().await {
                    Ok(next) => next,
                    Err(error) => {
                        tracing::warn!(%error, "the scheduler could not read its next time");
                        Some(now + 1_000)
                    }
                };
                let until = next
                    .unwrap_or(i64::MAX)
                    .min(now.saturating_add(LONGEST_SLEEP_MS));
                tokio::select! {
                    biased;
                    () = ending.cancelled() => return,
                    () = scheduler.clock.sleep_until(until) => {}
                    () = scheduler.wake.0.notified() => {}
                }
            }
        });
    }

    /// Claims the due schedules no other instance holds and handles their due times;
    /// whether it claimed as many as it may (more may be due), and whether one failed.
    async fn pass(&self, now: i64) -> Result<(bool, bool), StoreError> {
        let claimed = self
            .store
            .claim_due_schedules(&self.instance, now, now + self.claim_ms, CLAIM_BATCH)
            .await?;
        let full = claimed.len() as i64 == CLAIM_BATCH;
        let failed = std::sync::atomic::AtomicBool::new(false);
        futures_util::stream::iter(claimed)
            .for_each_concurrent(CONCURRENT, |row| {
                let failed = &failed;
                async move {
                    let (id, version, cursor) = (row.id.clone(), row.version, row.next_fire_at);
                    if let Err(error) = self.handle(row, now).await {
                        // Handed back as it was (a busy database passes): the next pass
                        // handles its due times again, and what it fired meanwhile is not
                        // fired twice (each time's row is unique).
                        tracing::warn!(%error, schedule = id, "a schedule's due times wait for a retry");
                        failed.store(true, std::sync::atomic::Ordering::Relaxed);
                        let release = self.store.settle_schedule(&id, &self.instance, version, cursor);
                        if let Err(error) = release.await {
                            tracing::warn!(%error, schedule = id, "a schedule's claim waits to lapse");
                        }
                    }
                }
            })
            .await;
        Ok((full, failed.into_inner()))
    }

    /// Handles the due times of one claimed schedule, then hands it back with its next
    /// time.
    async fn handle(&self, row: ScheduleRow, now: i64) -> Result<(), Refusal> {
        let spec = match edit::stored_spec(&row) {
            Ok(spec) => spec,
            Err(error) => {
                tracing::error!(%error, schedule = row.id, "a stored schedule no longer reads; it stops");
                let settled =
                    self.store
                        .settle_schedule(&row.id, &self.instance, row.version, None);
                return Ok(settled.await?);
            }
        };
        let Some(cursor) = row.next_fire_at else {
            return Ok(());
        };
        let due = due::due(&spec, cursor, now);
        for (time, handling) in due.times {
            match handling {
                due::Handling::Fire => {
                    fire::Fire::new(self, &row, &spec, time, false)
                        .send()
                        .await?;
                }
                due::Handling::Miss(reason) => {
                    let missed = fire::unsent(&row, time, "missed", reason, false);
                    self.store.record_fire(&missed).await?;
                }
            }
        }
        let settled = self
            .store
            .settle_schedule(&row.id, &self.instance, row.version, due.next);
        Ok(settled.await?)
    }

    /// "Run now": a fire of `row` at the clock's now, by the schedule's `overlap`.
    pub async fn run_now(&self, row: &ScheduleRow) -> Result<crate::store::FireRow, Refusal> {
        let spec = edit::stored_spec(row).map_err(|e| Refusal::InvalidMessage(e.to_string()))?;
        let now = self.clock.now_ms();
        fire::Fire::new(self, row, &spec, now, true).send().await?;
        let fires = self.store.fires(&row.id, 1).await?;
        fires
            .into_iter()
            .find(|fire| fire.scheduled_for == now)
            .ok_or(Refusal::AlreadyFired)
    }
}
