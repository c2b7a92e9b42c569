//! Sockets open per user: counted while open, released when the socket ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::domain::UserId;
use crate::error::ApiError;

/// Open sockets per user, capped. A `std::sync::Mutex`: held for a map update only.
#[derive(Clone)]
pub struct SocketCounts {
    limit: u32,
    open: Arc<Mutex<HashMap<UserId, u32>>>,
}

/// One open socket of a user; dropping it frees the place.
pub struct SocketSlot {
    user: UserId,
    counts: SocketCounts,
}

impl SocketCounts {
    /// At most `limit` sockets per user.
    pub fn new(limit: u32) -> Self {
        Self {
            limit,
            open: Default::default(),
        }
    }

    /// Takes a place for a new socket of `user`, or refuses with 429.
    pub fn open(&self, user: UserId) -> Result<SocketSlot, ApiError> {
        let mut open = self.open.lock().expect("socket counts lock poisoned");
        let count = open.entry(user).or_default();
        if *count >= self.limit {
            return Err(ApiError::TooManySockets(self.limit));
        }
        *count += 1;
        Ok(SocketSlot {
            user,
            counts: self.clone(),
        })
    }

    /// Sockets `user` has open.
    pub fn open_for(&self, user: UserId) -> u32 {
        let open = self.open.lock().expect("socket counts lock poisoned");
        open.get(&user).copied().unwrap_or(0)
    }
}

impl Drop for SocketSlot {
    fn drop(&mut self) {
        let mut open = self
            .counts
            .open
            .lock()
            .expect("socket counts lock poisoned");
        if let Some(count) = open.get_mut(&self.user) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.user);
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
        let user = UserId::generate();
        let first = counts.open(user).unwrap();
        let _second = counts.open(user).unwrap();
        assert!(matches!(
            counts.open(user),
            Err(ApiError::TooManySockets(2))
        ));
        assert!(counts.open(UserId::generate()).is_ok());
        drop(first);
        assert!(counts.open(user).is_ok());
    }
}
