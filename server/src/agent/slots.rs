//! Run slots: at most `--max-concurrent-runs` runs execute at once across the server;
//! the others wait their turn, first come first served.
//!
//! A waiting run has already committed its `RUN_STARTED` (the session is `running`) and
//! records `CUSTOM tandem.run_queued` before it waits, so the log itself is the
//! persistent queue: after a restart, recovery re-admits queued runs in the order their
//! sessions last changed. Admission is synchronous, so the order of [`RunSlots::admit`]
//! calls is the order runs start. Paused sessions hold no slot.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

/// The server's run slots. A `std::sync::Mutex`: held only to move a slot or a waiter,
/// never across an `.await`.
#[derive(Clone)]
pub struct RunSlots {
    state: Arc<Mutex<SlotState>>,
    max_queued: usize,
}

struct SlotState {
    free: usize,
    waiting: VecDeque<oneshot::Sender<RunSlot>>,
}

/// A slot held by a running run; dropping it hands it to the next waiting run.
pub struct RunSlot {
    state: Option<Arc<Mutex<SlotState>>>,
}

/// What admission gives a run.
pub enum Admission {
    /// A slot was free.
    Now(RunSlot),
    /// The run is `position`-th in line; `ready` yields its slot.
    Queued {
        position: usize,
        ready: oneshot::Receiver<RunSlot>,
    },
}

impl RunSlots {
    /// `concurrent` slots; new work is refused once `max_queued` runs wait.
    pub fn new(concurrent: usize, max_queued: usize) -> Self {
        Self {
            state: Arc::new(Mutex::new(SlotState {
                free: concurrent.max(1),
                waiting: VecDeque::new(),
            })),
            max_queued,
        }
    }

    /// A slot now, or a place in line.
    pub fn admit(&self) -> Admission {
        let mut state = self.lock();
        state.forget_stopped();
        if state.free > 0 {
            state.free -= 1;
            return Admission::Now(RunSlot {
                state: Some(self.state.clone()),
            });
        }
        let (sender, ready) = oneshot::channel();
        state.waiting.push_back(sender);
        Admission::Queued {
            position: state.waiting.len(),
            ready,
        }
    }

    /// Whether new work may still queue (false: answer 503 `saturated`).
    pub fn has_room(&self) -> bool {
        let mut state = self.lock();
        state.forget_stopped();
        state.free > 0 || state.waiting.len() < self.max_queued
    }

    /// Runs waiting for a slot.
    pub fn queued(&self) -> usize {
        let mut state = self.lock();
        state.forget_stopped();
        state.waiting.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().expect("run slots lock poisoned")
    }
}

impl SlotState {
    /// Drops the places of runs stopped while they waited.
    fn forget_stopped(&mut self) {
        self.waiting.retain(|waiter| !waiter.is_closed());
    }
}

impl Drop for RunSlot {
    fn drop(&mut self) {
        let Some(shared) = self.state.take() else {
            return;
        };
        let mut state = shared.lock().expect("run slots lock poisoned");
        while let Some(waiter) = state.waiting.pop_front() {
            let handoff = RunSlot {
                state: Some(shared.clone()),
            };
            match waiter.send(handoff) {
                Ok(()) => return,
                // The waiting run was stopped: disarm the slot it did not take (so its
                // drop does not come back here) and try the next one.
                Err(mut unclaimed) => unclaimed.state = None,
            }
        }
        state.free += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(admission: Admission) -> RunSlot {
        match admission {
            Admission::Now(slot) => slot,
            Admission::Queued { .. } => panic!("expected a free slot"),
        }
    }

    #[tokio::test]
    async fn runs_beyond_the_limit_wait_in_order_and_stopped_waiters_are_skipped() {
        let slots = RunSlots::new(1, 10);
        let first = slot(slots.admit());
        let Admission::Queued {
            position: 1,
            ready: stopped,
        } = slots.admit()
        else {
            panic!("queued first");
        };
        let Admission::Queued {
            position: 2,
            ready: second,
        } = slots.admit()
        else {
            panic!("queued second");
        };
        drop(stopped);
        drop(first);
        let second = second.await.expect("the slot is handed over");
        assert_eq!(slots.queued(), 0);
        drop(second);
        let _again = slot(slots.admit());
    }

    #[test]
    fn the_queue_has_a_bound_and_stopped_waiters_leave_it() {
        let slots = RunSlots::new(1, 1);
        let _running = slot(slots.admit());
        assert!(slots.has_room());
        let waiting = slots.admit();
        assert!(!slots.has_room());
        drop(waiting);
        assert!(slots.has_room());
        let Admission::Queued { position: 1, .. } = slots.admit() else {
            panic!("first in line again");
        };
    }
}
