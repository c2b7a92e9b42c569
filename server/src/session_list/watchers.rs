//! The instance's registry of open session lists: one channel per user with a list open
//! here, created with the first and dropped with the last, so nothing is read or sent
//! for a change nobody here lists.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use crate::domain::{SessionId, UserId};

/// Notices a user's lists may be behind by before they read the whole list again.
const BUFFER: usize = 64;

/// What a list is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListNotice {
    /// The session's row changed (or it was created): read it again.
    Changed(SessionId),
    /// The session was deleted (sent to every list; one that never listed it ignores it).
    Removed(SessionId),
    /// Changes may have been missed: read the whole list again.
    Reload,
}

/// The open lists of this instance, by user. A `std::sync::Mutex`: held for a map
/// lookup, never across an `.await`.
#[derive(Clone, Default)]
pub struct ListWatchers {
    users: Arc<Mutex<HashMap<UserId, broadcast::Sender<ListNotice>>>>,
}

impl ListWatchers {
    /// Starts telling one list of `user` about changes from now on.
    pub fn watch(&self, user: UserId) -> ListWatch {
        let mut users = self.lock();
        let sender = users
            .entry(user)
            .or_insert_with(|| broadcast::channel(BUFFER).0);
        ListWatch {
            receiver: Some(sender.subscribe()),
            user,
            watchers: self.clone(),
        }
    }

    /// Whether any list is open here (if none, a change need not even be looked at).
    pub fn any(&self) -> bool {
        !self.lock().is_empty()
    }

    /// Tells `owner`'s lists that `session` changed.
    pub fn changed(&self, owner: UserId, session: SessionId) {
        if let Some(sender) = self.lock().get(&owner) {
            let _ = sender.send(ListNotice::Changed(session));
        }
    }

    /// Tells every list that `session` was deleted (its owner is gone with its row).
    pub fn removed(&self, session: SessionId) {
        self.tell_all(ListNotice::Removed(session));
    }

    /// Tells every list to read itself again.
    pub fn reload_all(&self) {
        self.tell_all(ListNotice::Reload);
    }

    fn tell_all(&self, notice: ListNotice) {
        for sender in self.lock().values() {
            let _ = sender.send(notice);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<UserId, broadcast::Sender<ListNotice>>> {
        self.users.lock().expect("list watchers lock poisoned")
    }
}

/// One open list's notices; dropping it closes the user's channel if it was the last.
pub struct ListWatch {
    receiver: Option<broadcast::Receiver<ListNotice>>,
    user: UserId,
    watchers: ListWatchers,
}

impl ListWatch {
    /// The next notice; `Reload` when this list fell behind, `None` when the registry
    /// is gone.
    pub async fn recv(&mut self) -> Option<ListNotice> {
        let receiver = self.receiver.as_mut()?;
        match receiver.recv().await {
            Ok(notice) => Some(notice),
            Err(broadcast::error::RecvError::Lagged(_)) => Some(ListNotice::Reload),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }

    /// A notice already waiting, if any (`Reload` when this list fell behind).
    pub fn try_recv(&mut self) -> Option<ListNotice> {
        match self.receiver.as_mut()?.try_recv() {
            Ok(notice) => Some(notice),
            Err(broadcast::error::TryRecvError::Lagged(_)) => Some(ListNotice::Reload),
            Err(_) => None,
        }
    }
}

impl Drop for ListWatch {
    fn drop(&mut self) {
        let mut users = self.watchers.lock();
        drop(self.receiver.take());
        if users
            .get(&self.user)
            .is_some_and(|sender| sender.receiver_count() == 0)
        {
            users.remove(&self.user);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_reaches_only_its_owners_lists_and_a_deletion_reaches_all() {
        let watchers = ListWatchers::default();
        let (ada, bob) = (UserId::generate(), UserId::generate());
        let mut ada_list = watchers.watch(ada);
        let mut bob_list = watchers.watch(bob);
        let session = SessionId::generate();
        watchers.changed(ada, session);
        assert_eq!(ada_list.try_recv(), Some(ListNotice::Changed(session)));
        assert_eq!(bob_list.try_recv(), None);
        watchers.removed(session);
        assert_eq!(ada_list.try_recv(), Some(ListNotice::Removed(session)));
        assert_eq!(bob_list.try_recv(), Some(ListNotice::Removed(session)));
    }

    #[test]
    fn the_last_list_of_a_user_takes_its_channel_with_it() {
        let watchers = ListWatchers::default();
        let ada = UserId::generate();
        let first = watchers.watch(ada);
        let second = watchers.watch(ada);
        drop(first);
        assert!(watchers.any());
        drop(second);
        assert!(!watchers.any());
    }

    #[test]
    fn a_list_that_falls_behind_is_told_to_reload() {
        let watchers = ListWatchers::default();
        let ada = UserId::generate();
        let mut list = watchers.watch(ada);
        for _ in 0..BUFFER + 1 {
            watchers.changed(ada, SessionId::generate());
        }
        assert_eq!(list.try_recv(), Some(ListNotice::Reload));
    }
}
