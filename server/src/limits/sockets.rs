//! Sockets open per user (and per share link): counted while open, released when the
//! socket ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::domain::UserId;
use crate::error::ApiError;

/// Whose places a socket takes: a user's own sockets, or those opened through one share
/// link (counted apart, so a link's viewers can never crowd the owner out).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SocketOwner {
    User(UserId),
    /// A share link, by its id.
    ShareLink(String),
}

/// Open sockets per owner, capped. A `std::sync::Mutex`: held for a map update only.
#[derive(Clone)]
pub struct SocketCounts {
    limit: u32,
    open: Arc<Mutex<HashMap<SocketOwner, u32>>>,
}

/// One open socket; dropping it frees the place.
pub struct SocketSlot {
    owner: SocketOwner,
    counts: SocketCounts,
}

impl SocketCounts {
    /// At most `limit` sockets per user, and per share link.
    pub fn new(limit: u32) -> Self {
        Self {
            limit,
            open: Default::default(),
        }
    }

    /// Takes a place for a new socket of `owner`, or refuses with 429.
    pub fn open(&self, owner: SocketOwner) -> Result<SocketSlot, ApiError> {
        let mut open = self.open.lock().expect("socket counts lock poisoned");
        let count = open.entry(owner.clone()).or_default();
        if *count >= self.limit {
            return Err(ApiError::TooManySockets(self.limit));
        }
        *count += 1;
        Ok(SocketSlot {
            owner,
            counts: self.clone(),
        })
    }
}

impl Drop for SocketSlot {
    fn drop(&mut self) {
        let mut open = self
            .counts
            .open
            .lock()
            .expect("socket counts lock poisoned");
        if let Some(count) = open.get_mut(&self.owner) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_gets_their_limit_and_a_closed_socket_frees_a_place() {
        let counts = SocketCounts::new(2);
        let user = SocketOwner::User(UserId::generate());
        let first = counts.open(user.clone()).unwrap();
        let _second = counts.open(user.clone()).unwrap();
        assert!(matches!(
            counts.open(user.clone()),
            Err(ApiError::TooManySockets(2))
        ));
        assert!(counts.open(SocketOwner::User(UserId::generate())).is_ok());
        drop(first);
        assert!(counts.open(user).is_ok());
    }

    #[test]
    fn a_share_links_viewers_never_take_the_owners_places() {
        let counts = SocketCounts::new(1);
        let owner = UserId::generate();
        let _viewer = counts.open(SocketOwner::ShareLink("shr_1".into())).unwrap();
        assert!(counts.open(SocketOwner::ShareLink("shr_1".into())).is_err());
        assert!(counts.open(SocketOwner::User(owner)).is_ok());
    }
}
