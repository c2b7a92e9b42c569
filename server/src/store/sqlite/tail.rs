//! The log's tail in memory: every committed event still in `events_tail`, by session.
//!
//! The writer appends each event to `events_tail` (commit order, a page or two per commit)
//! and, once the commit is done, here. Readers take a session's newest events from here
//! and the older ones from `events`, so no read scans the tail table. Folding
//! ([`super::fold`]) moves a session's oldest rows into `events` in one statement, then
//! drops them here. While a session has rows here its true last seq is here;
//! `sessions.last_seq` catches up when they are folded or its status changes.
//!
//! It must hold only committed rows: readers trust it as they trust the database.
//!
//! A `std::sync::Mutex` is right here: it is held for a map lookup and a copy of a few
//! reference-counted rows, never across an `.await`; the writer and readers contend for it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::domain::SessionId;
use crate::store::SessionRow;

/// A session's rows are folded once this many wait: one page write in `events` per this
/// many events instead of one per commit.
const FOLD_AT: usize = 64;
/// A session whose newest row is this old is folded whatever its count (it went quiet).
const QUIET: Duration = Duration::from_millis(250);
/// Rows a fold moves at least while the tail is not crowded: whole sessions, the fullest
/// first, until this many (usually one session's [`FOLD_AT`] rows), which bounds how long
/// a fold holds the writer.
const FOLD_SLICE: usize = 64;
/// Rows a fold moves at least while the tail is crowded.
const CROWDED_SLICE: usize = 4096;
/// Rows held past which the tail is crowded whatever the number of sessions; with many
/// sessions, twice what they hold before they are due. While crowded, the writer folds
/// after every batch, not only when it is idle, so what is held stays bounded however
/// fast the log grows.
const SOFT_CAP: usize = 4096;

/// One committed event in the tail.
#[derive(Debug, Clone)]
pub(super) struct TailRow {
    pub seq: u64,
    pub position: i64,
    pub json: Arc<str>,
}

#[derive(Default)]
struct SessionTail {
    /// Contiguous seqs, oldest first (folds take the oldest).
    rows: VecDeque<TailRow>,
    last_commit: Option<Instant>,
}

#[derive(Default)]
struct State {
    sessions: HashMap<SessionId, SessionTail>,
    rows: usize,
    next_position: i64,
}

impl State {
    fn crowded(&self) -> bool {
        self.rows > SOFT_CAP.max(2 * FOLD_AT * self.sessions.len())
    }

    /// Whole sessions that are `due`, the fullest first, until `slice` rows.
    fn plan(&self, slice: usize, due: impl Fn(&SessionTail) -> bool) -> FoldPlan {
        let mut due: Vec<(&SessionId, &SessionTail)> = self
            .sessions
            .iter()
            .filter(|(_, tail)| !tail.rows.is_empty() && due(tail))
            .collect();
        due.sort_by_key(|(_, tail)| std::cmp::Reverse(tail.rows.len()));
        let mut plan = FoldPlan::default();
        let mut planned = 0;
        for (session, tail) in due {
            if planned >= slice {
                break;
            }
            planned += tail.rows.len();
            plan.sessions
                .push((*session, tail.rows.iter().cloned().collect()));
        }
        plan
    }
}

/// The tail's rows in memory, shared by the writer and readers.
#[derive(Default)]
pub(super) struct Tail {
    state: Mutex<State>,
}

/// What one fold moves: per session, its oldest rows.
#[derive(Debug, Default)]
pub(super) struct FoldPlan {
    pub sessions: Vec<(SessionId, Vec<TailRow>)>,
}

impl FoldPlan {
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

impl Tail {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The seq of the session's newest committed event, if it has rows here.
    pub fn last_seq(&self, session: SessionId) -> Option<u64> {
        let state = self.lock();
        let tail = state.sessions.get(&session)?;
        tail.rows.back().map(|row| row.seq)
    }

    /// The row with its true `last_seq` (`sessions.last_seq` lags while the session has
    /// rows here).
    pub fn current(&self, mut row: SessionRow) -> SessionRow {
        if let Some(last) = self.last_seq(row.id) {
            row.last_seq = row.last_seq.max(last);
        }
        row
    }

    /// Up to `limit` of the session's rows here with `seq > after`, in seq order.
    pub fn rows_after(&self, session: SessionId, after: u64, limit: usize) -> Vec<TailRow> {
        let state = self.lock();
        let Some(tail) = state.sessions.get(&session) else {
            return Vec::new();
        };
        let skip = tail.rows.partition_point(|row| row.seq <= after);
        tail.rows.iter().skip(skip).take(limit).cloned().collect()
    }

    /// The position the next appended row gets.
    pub fn next_position(&self) -> i64 {
        self.lock().next_position
    }

    /// Takes in rows whose commit is done, in commit order.
    pub fn committed(&self, rows: Vec<(SessionId, TailRow)>, now: Instant) {
        let mut state = self.lock();
        for (session, row) in rows {
            state.next_position = state.next_position.max(row.position + 1);
            let tail = state.sessions.entry(session).or_default();
            tail.rows.push_back(row);
            tail.last_commit = Some(now);
            state.rows += 1;
        }
    }

    /// The rows to fold now: whole sessions, those with many rows waiting or that went
    /// quiet (any, while crowded), the fullest first, until a slice is reached.
    pub fn plan(&self, now: Instant) -> FoldPlan {
        let state = self.lock();
        let crowded = state.crowded();
        let slice = if crowded { CROWDED_SLICE } else { FOLD_SLICE };
        state.plan(slice, |tail| {
            let quiet = tail
                .last_commit
                .is_none_or(|at| now.saturating_duration_since(at) >= QUIET);
            crowded || quiet || tail.rows.len() >= FOLD_AT
        })
    }

    /// The next rows to fold whether they are due or not, whole sessions until `slice`.
    pub fn plan_everything(&self, slice: usize) -> FoldPlan {
        self.lock().plan(slice, |_| true)
    }

    /// Drops the rows a committed fold moved (each session's oldest).
    pub fn folded(&self, plan: &FoldPlan) {
        let mut state = self.lock();
        for (session, rows) in &plan.sessions {
            let Some(tail) = state.sessions.get_mut(session) else {
                continue;
            };
            // The plan took a prefix of the session's rows, and only the writer (which
            // folds) removes rows, so they are still the front ones.
            let mut dropped = 0;
            for row in rows {
                if tail
                    .rows
                    .front()
                    .is_some_and(|front| front.position == row.position)
                {
                    tail.rows.pop_front();
                    dropped += 1;
                }
            }
            if tail.rows.is_empty() {
                state.sessions.remove(session);
            }
            state.rows -= dropped;
        }
    }

    /// The lowest position still held (every row below it is folded), or the next
    /// position when nothing is.
    pub fn lowest_position(&self) -> i64 {
        let state = self.lock();
        state
            .sessions
            .values()
            .filter_map(|tail| tail.rows.front().map(|row| row.position))
            .min()
            .unwrap_or(state.next_position)
    }

    /// Forgets a deleted session's rows (the database deleted them with it).
    pub fn forget(&self, session: SessionId) {
        let mut state = self.lock();
        if let Some(tail) = state.sessions.remove(&session) {
            state.rows -= tail.rows.len();
        }
    }

    /// Starts over, empty, after the whole tail table was folded.
    pub fn reset(&self, next_position: i64) {
        *self.lock() = State {
            next_position,
            ..State::default()
        };
    }

    /// Whether the writer should fold after every batch (too much is held).
    pub fn crowded(&self) -> bool {
        self.lock().crowded()
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        self.lock().rows
    }
}

#[cfg(test)]
#[path = "tail_tests.rs"]
mod tests;
