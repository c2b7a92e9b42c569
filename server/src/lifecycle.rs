//! A clean stop, in two phases every long-lived task of the process takes part in.
//!
//! **Halting** (a stop begins): the sockets close with 1001, each run stops at its next
//! safe point (what it has in hand committed, a model call abandoned as a crash would
//! abandon it, a tool call finished and its result committed), runs waiting for a slot
//! stop waiting, and the background tasks that start or renew runs (the lease keeper,
//! the expiry sweeper, retention, the relay) end. Nothing new starts.
//! **Ending** (every run has stopped): what the runs still needed (the MCP servers, the
//! webhook deliverer) ends too.
//!
//! Each task is spawned through [`Lifecycle::spawn`] so the stop can join it;
//! `startup::Application` drives the order (see `docs/architecture.md`, "A clean stop").

use std::future::Future;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The process's stop, shared by every task that must end with it.
#[derive(Clone, Default)]
pub struct Lifecycle {
    halting: CancellationToken,
    ending: CancellationToken,
    /// Runs and the tasks that end at halting.
    halted_tasks: TaskTracker,
    /// The tasks that end once the runs have stopped.
    ended_tasks: TaskTracker,
}

impl Lifecycle {
    /// Cancelled when a stop begins: runs stop at a safe point, sockets close, the tasks
    /// that start or renew runs end.
    pub fn halting(&self) -> &CancellationToken {
        &self.halting
    }

    /// Cancelled once every run has stopped: the tasks runs relied on end.
    pub fn ending(&self) -> &CancellationToken {
        &self.ending
    }

    /// Whether a stop has begun.
    pub fn is_halting(&self) -> bool {
        self.halting.is_cancelled()
    }

    /// Spawns a task that ends at halting (it watches [`Self::halting`]), on this runtime.
    pub fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.halted_tasks.spawn(task);
    }

    /// Spawns a task that ends at halting on `runtime` (a run, on the app's runtime).
    pub fn spawn_on<F>(&self, task: F, runtime: &tokio::runtime::Handle)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.halted_tasks.spawn_on(task, runtime);
    }

    /// Spawns a task that ends at ending (it watches [`Self::ending`]).
    pub fn spawn_until_ending<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.ended_tasks.spawn(task);
    }

    /// Begins the stop and waits until every run and every task ending with them has
    /// ended.
    pub async fn halt(&self) {
        self.halting.cancel();
        self.halted_tasks.close();
        self.halted_tasks.wait().await;
    }

    /// Ends the rest and waits for it.
    pub async fn end(&self) {
        self.halting.cancel();
        self.ending.cancel();
        self.ended_tasks.close();
        self.ended_tasks.wait().await;
    }

    /// How many tasks have not ended yet (runs included), for the log of a stop that
    /// ran out of time.
    pub fn unfinished(&self) -> usize {
        self.halted_tasks.len() + self.ended_tasks.len()
    }
}

/// A timer for a background task that works every `period`: a tick missed while the task
/// was busy is delayed, never made up in a burst. The first tick is at once.
pub fn steady_interval(period: std::time::Duration) -> tokio::time::Interval {
    let mut interval = tokio::time::interval(period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    interval
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn halting_joins_its_tasks_before_the_ending_ones_end() {
        let lifecycle = Lifecycle::default();
        let (halted, mut halted_seen) = tokio::sync::oneshot::channel::<()>();
        let watching = lifecycle.clone();
        lifecycle.spawn(async move {
            watching.halting().cancelled().await;
            let _ = halted.send(());
        });
        let ending = lifecycle.clone();
        let (ended, mut ended_seen) = tokio::sync::oneshot::channel::<()>();
        lifecycle.spawn_until_ending(async move {
            ending.ending().cancelled().await;
            let _ = ended.send(());
        });
        lifecycle.halt().await;
        assert!(halted_seen.try_recv().is_ok(), "the halting task ended");
        assert!(ended_seen.try_recv().is_err(), "the ending task still runs");
        assert_eq!(lifecycle.unfinished(), 1);
        lifecycle.end().await;
        assert!(ended_seen.try_recv().is_ok());
        assert_eq!(lifecycle.unfinished(), 0);
    }
}
