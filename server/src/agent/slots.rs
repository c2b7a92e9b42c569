//! Run slots: at most `--max-concurrent-runs` runs execute at once across the server;
//! the others wait, each user's in a line of their own, and a slot that frees goes to
//! the users in turn (round-robin), so no user's flood holds anyone else back for more
//! than one slot per user ahead of them in the turn. Within one user's line, first come
//! first served.
//!
//! The turn: a slot goes to the oldest waiter of the user after the one served last
//! (served = given a slot, at once or after waiting). A user who joins the turn (their
//! line was empty) takes the place just before the user served last, so a newcomer
//! behind one flooding user starts as soon as one slot frees, however many runs the
//! flooder has queued. A user may hold at most `--max-queued-runs-per-user` waiting runs
//! (429 `too_many_queued_runs` past it); `--max-queued-runs` bounds the server's whole
//! queue (503 `saturated`).
//!
//! A waiting run has already committed its `RUN_STARTED` (the session is `running`) and
//! records `CUSTOM tandem.run_queued` before it waits, so the log itself is the
//! persistent queue: after a restart, recovery re-admits queued runs in the order their
//! sessions last changed, which keeps each user's order. Admission is synchronous, so
//! the order of [`RunSlots::admit`] calls is the order each user's runs start. This
//! module decides who gets a slot; it writes nothing.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::domain::UserId;

/// The server's run slots. A `std::sync::Mutex`: held only to move a slot or a waiter,
/// never across an `.await`.
#[derive(Clone)]
pub struct RunSlots {
    state: Arc<Mutex<SlotState>>,
    bounds: QueueBounds,
}

/// How many runs may wait for a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueBounds {
    /// Across the server (`--max-queued-runs`).
    pub total: usize,
    /// Of one user (`--max-queued-runs-per-user`).
    pub per_user: usize,
}

/// Why new work may not queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoRoom {
    /// The server's queue is full.
    #[error("the server's queue of runs is full")]
    Saturated,
    /// This user already has their share of the queue waiting.
    #[error("the user already has {0} runs waiting")]
    UserShareFull(usize),
}

/// A run waiting for a slot: the slot is sent to it.
type Waiter = oneshot::Sender<RunSlot>;

struct SlotState {
    free: usize,
    /// Each user's waiting runs, oldest first. Only users with at least one.
    lines: HashMap<UserId, VecDeque<Waiter>>,
    /// The users with waiting runs, the one whose turn is next first.
    turn: VecDeque<UserId>,
    /// The user given a slot last.
    last_served: Option<UserId>,
}

/// A slot held by a running run; dropping it hands it to the next waiting run in turn.
pub struct RunSlot {
    state: Option<Arc<Mutex<SlotState>>>,
}

/// What admission gives a run.
pub enum Admission {
    /// A slot was free.
    Now(RunSlot),
    /// The run waits; `ready` yields its slot. `position`: how many slots must free
    /// before it starts (1: the next one), as the line stood when it joined; runs of
    /// users who join the turn later may still go ahead of it, one per user.
    Queued {
        position: usize,
        ready: oneshot::Receiver<RunSlot>,
    },
}

impl RunSlots {
    /// `concurrent` slots; new work is refused past `bounds`.
    pub fn new(concurrent: usize, bounds: QueueBounds) -> Self {
        Self {
            state: Arc::new(Mutex::new(SlotState {
                free: concurrent.max(1),
                lines: HashMap::new(),
                turn: VecDeque::new(),
                last_served: None,
            })),
            bounds,
        }
    }

    /// A slot now for a run of `user`, or a place in their line. Never refuses: the
    /// caller asked [`RunSlots::room_for`] before committing the run (recovery re-admits
    /// runs already queued, whatever the bounds).
    pub fn admit(&self, user: UserId) -> Admission {
        let mut state = self.lock();
        state.forget_stopped();
        if state.free > 0 {
            state.free -= 1;
            state.last_served = Some(user);
            return Admission::Now(RunSlot {
                state: Some(self.state.clone()),
            });
        }
        let (sender, ready) = oneshot::channel();
        state.join(user, sender);
        Admission::Queued {
            position: state.position_of_last(user),
            ready,
        }
    }

    /// Whether a new run of `user` may still start or queue.
    pub fn room_for(&self, user: UserId) -> Result<(), NoRoom> {
        let mut state = self.lock();
        state.forget_stopped();
        if state.free > 0 {
            return Ok(());
        }
        let own = state.lines.get(&user).map_or(0, VecDeque::len);
        if own >= self.bounds.per_user {
            return Err(NoRoom::UserShareFull(own));
        }
        if state.queued() >= self.bounds.total {
            return Err(NoRoom::Saturated);
        }
        Ok(())
    }

    /// Runs waiting for a slot, of every user.
    pub fn queued(&self) -> usize {
        let mut state = self.lock();
        state.forget_stopped();
        state.queued()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().expect("run slots lock poisoned")
    }
}

impl SlotState {
    fn queued(&self) -> usize {
        self.lines.values().map(VecDeque::len).sum()
    }

    /// Puts a waiter at the end of `user`'s line; a user new to the turn takes the place
    /// just before the user served last (the end of the current round).
    fn join(&mut self, user: UserId, waiter: Waiter) {
        let line = self.lines.entry(user).or_default();
        line.push_back(waiter);
        if line.len() > 1 {
            return;
        }
        match self.turn.back() {
            Some(&last) if Some(last) == self.last_served => {
                self.turn.insert(self.turn.len() - 1, user)
            }
            _ => self.turn.push_back(user),
        }
    }

    /// How many slots must free before the last waiter of `user` starts, if nobody new
    /// joins and nobody leaves: it is the user's k-th; each user before them in the turn
    /// is served up to k times first, each after them up to k-1 times.
    fn position_of_last(&self, user: UserId) -> usize {
        let k = self.lines.get(&user).map_or(1, VecDeque::len);
        let mut ahead = k - 1;
        let mut before = true;
        for other in &self.turn {
            if *other == user {
                before = false;
                continue;
            }
            let theirs = self.lines.get(other).map_or(0, VecDeque::len);
            ahead += theirs.min(if before { k } else { k - 1 });
        }
        ahead + 1
    }

    /// Takes the oldest waiter of the user whose turn it is out of their line (a user
    /// whose line empties leaves the turn); the turn moves on only in [`Self::served`].
    fn next_waiter(&mut self) -> Option<(UserId, Waiter)> {
        while let Some(&user) = self.turn.front() {
            let Some(line) = self.lines.get_mut(&user) else {
                self.turn.pop_front();
                continue;
            };
            let waiter = line.pop_front();
            if line.is_empty() {
                self.lines.remove(&user);
                self.turn.pop_front();
            }
            if let Some(waiter) = waiter {
                return Some((user, waiter));
            }
        }
        None
    }

    /// `user` got a slot: if they still wait, their turn comes again after everyone's.
    fn served(&mut self, user: UserId) {
        if self.turn.front() == Some(&user) {
            self.turn.rotate_left(1);
        }
        self.last_served = Some(user);
    }

    /// Drops the places of runs stopped while they waited.
    fn forget_stopped(&mut self) {
        self.lines.retain(|_, line| {
            line.retain(|waiter| !waiter.is_closed());
            !line.is_empty()
        });
        let lines = &self.lines;
        self.turn.retain(|user| lines.contains_key(user));
    }
}

impl Drop for RunSlot {
    fn drop(&mut self) {
        let Some(shared) = self.state.take() else {
            return;
        };
        let mut state = shared.lock().expect("run slots lock poisoned");
        while let Some((user, waiter)) = state.next_waiter() {
            let handoff = RunSlot {
                state: Some(shared.clone()),
            };
            match waiter.send(handoff) {
                Ok(()) => return state.served(user),
                // The waiting run was stopped: disarm the slot it did not take (so its
                // drop does not come back here) and try the next one in turn.
                Err(mut unclaimed) => unclaimed.state = None,
            }
        }
        state.free += 1;
    }
}

#[cfg(test)]
#[path = "slots_tests.rs"]
mod tests;
