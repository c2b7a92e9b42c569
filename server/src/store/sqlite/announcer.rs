//! How the embedded backend tells its own process what changed: no other process serves
//! the file (the log's mark keeps a second server out), so the changes PostgreSQL
//! announces with `NOTIFY` (a session's listed row changed, a session was deleted) go
//! straight to the receivers [`EventLog::changes`](crate::store::EventLog::changes) handed
//! out, after their commit. Revocations from the shell reach the same receivers through
//! [`super::revocations`].

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use crate::store::Change;

/// The receivers of this store's changes. A `std::sync::Mutex`: held to send, never
/// across an `.await`.
#[derive(Clone, Default)]
pub(super) struct Announcer {
    receivers: Arc<Mutex<Vec<UnboundedSender<Change>>>>,
}

impl Announcer {
    /// A new receiver of every change told from now on, and its sender (for changes
    /// found elsewhere, such as revocations).
    pub fn listen(&self) -> (UnboundedSender<Change>, UnboundedReceiver<Change>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.lock().push(sender.clone());
        (sender, receiver)
    }

    /// Tells every receiver still open; forgets those that were dropped. Nothing to tell
    /// (most batches: tokens change no listed row) takes no lock.
    pub fn tell(&self, changes: impl IntoIterator<Item = Change>) {
        let mut changes = changes.into_iter().peekable();
        if changes.peek().is_none() {
            return;
        }
        let mut receivers = self.lock();
        if receivers.is_empty() {
            return;
        }
        for change in changes {
            receivers.retain(|receiver| receiver.send(change.clone()).is_ok());
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<UnboundedSender<Change>>> {
        self.receivers.lock().expect("announcer lock poisoned")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::SessionId;

    #[test]
    fn every_open_receiver_hears_each_change_and_dropped_ones_are_forgotten() {
        let announcer = Announcer::default();
        let (_, mut first) = announcer.listen();
        let (_, second) = announcer.listen();
        drop(second);
        let session = SessionId::generate();
        announcer.tell([Change::Listed { session }, Change::Deleted { session }]);
        assert_eq!(first.try_recv(), Ok(Change::Listed { session }));
        assert_eq!(first.try_recv(), Ok(Change::Deleted { session }));
        assert!(first.try_recv().is_err());
        assert_eq!(announcer.lock().len(), 1);
    }
}
