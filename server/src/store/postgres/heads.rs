//! The heads of the sessions this instance's log writers appended to: each one's last seq
//! as of the writer's own last commit to it. With a session's head known, a batch of its
//! tokens is a bare insert at the seqs after it ([`super::tokens`]); the events' primary
//! key is the arbiter, so a head that another writer moved on (another instance appended
//! since) makes the insert collide, and the batch is committed again the locked way,
//! which reads the heads afresh.
//!
//! A head is only ever recorded from a commit that succeeded, and forgotten on any
//! failure of a batch that touched it, so a known head is never ahead of the log (an
//! insert after it would leave a gap); it may only fall behind, which the key catches.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use crate::domain::SessionId;

/// How many heads are kept before the oldest knowledge is dropped wholesale: enough for
/// every session an instance runs at once, small enough to never matter for memory.
const MOST: usize = 100_000;

/// Each session's head.
#[derive(Default)]
pub(super) struct Heads(Mutex<HashMap<SessionId, i64>>);

impl Heads {
    fn lock(&self) -> MutexGuard<'_, HashMap<SessionId, i64>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The heads of `sessions`, in their order, if every one is known.
    pub(super) fn of_all(&self, sessions: &[SessionId]) -> Option<Vec<i64>> {
        let heads = self.lock();
        sessions.iter().map(|id| heads.get(id).copied()).collect()
    }

    /// Records heads that a committed batch left.
    pub(super) fn record(&self, committed: impl IntoIterator<Item = (SessionId, i64)>) {
        let mut heads = self.lock();
        if heads.len() >= MOST {
            heads.clear();
        }
        heads.extend(committed);
    }

    /// Forgets the heads of `sessions` (a batch touching them failed, or refused them).
    pub(super) fn forget(&self, sessions: impl IntoIterator<Item = SessionId>) {
        let mut heads = self.lock();
        for id in sessions {
            heads.remove(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Heads;
    use crate::domain::SessionId;

    #[test]
    fn known_only_when_every_head_is() {
        let heads = Heads::default();
        let [a, b, c] = [(); 3].map(|_| SessionId::generate());
        heads.record([(a, 3), (b, 7)]);
        assert_eq!(heads.of_all(&[b, a]), Some(vec![7, 3]));
        assert_eq!(heads.of_all(&[a, c]), None);
        heads.forget([a]);
        assert_eq!(heads.of_all(&[a]), None);
        assert_eq!(heads.of_all(&[b]), Some(vec![7]));
    }
}
