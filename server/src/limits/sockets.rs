//! Sockets open at once, counted while open and released when the socket ends: each
//! user's own sockets, and the viewers that share links bring, per session and per
//! owner across all their links (so many links cannot multiply the cap).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::domain::{SessionId, UserId};
use crate::error::ApiError;

/// One count a socket takes a place in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SocketOwner {
    /// A user's own sockets.
    User(UserId),
    /// Viewers of one session, through any of its share links.
    SharedSession(SessionId),
    /// Viewers of any of this user's sessions, through any of their share links. Counted
    /// apart from [`SocketOwner::User`], so viewers can never crowd the owner out.
    SharedBy(UserId),
}

/// The caps of each count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocketLimits {
    /// `--sockets-per-user`.
    pub per_user: u32,
    /// `--viewer-sockets-per-session`.
    pub viewers_per_session: u32,
    /// `--viewer-sockets-per-owner`.
    pub viewers_per_owner: u32,
}

/// Open sockets per owner, capped. A `std::sync::Mutex`: held for a map update only.
#[derive(Clone)]
pub struct SocketCounts {
    limits: SocketLimits,
    open: Arc<Mutex<HashMap<SocketOwner, u32>>>,
}

/// One open socket; dropping it frees its places.
pub struct SocketSlot {
    owners: Vec<SocketOwner>,
    counts: SocketCounts,
}

impl SocketCounts {
    /// Counts capped by `limits`.
    pub fn new(limits: SocketLimits) -> Self {
        Self {
            limits,
            open: Default::default(),
        }
    }

    /// Takes a place in each of `owners`' counts for a new socket, or none and refuses
    /// with 429 naming the first count that is full.
    pub fn open(&self, owners: &[SocketOwner]) -> Result<SocketSlot, ApiError> {
        let mut open = self.open.lock().expect("socket counts lock poisoned");
        for owner in owners {
            let limit = self.limit(owner);
            if open.get(owner).copied().unwrap_or(0) >= limit {
                return Err(match owner {
                    SocketOwner::User(_) => ApiError::TooManySockets(limit),
                    SocketOwner::SharedSession(_) | SocketOwner::SharedBy(_) => {
                        ApiError::TooManyViewers(limit)
                    }
                });
            }
        }
        for owner in owners {
            *open.entry(*owner).or_default() += 1;
        }
        Ok(SocketSlot {
            owners: owners.to_vec(),
            counts: self.clone(),
        })
    }

    fn limit(&self, owner: &SocketOwner) -> u32 {
        match owner {
            SocketOwner::User(_) => self.limits.per_user,
            SocketOwner::SharedSession(_) => self.limits.viewers_per_session,
            SocketOwner::SharedBy(_) => self.limits.viewers_per_owner,
        }
    }
}

impl Drop for SocketSlot {
    fn drop(&mut self) {
        let mut open = self
            .counts
            .open
            .lock()
            .expect("socket counts lock poisoned");
        for owner in &self.owners {
            if let Some(count) = open.get_mut(owner) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    open.remove(owner);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: SocketLimits = SocketLimits {
        per_user: 2,
        viewers_per_session: 2,
        viewers_per_owner: 3,
    };

    #[test]
    fn a_user_gets_their_limit_and_a_closed_socket_frees_a_place() {
        let counts = SocketCounts::new(LIMITS);
        let user = [SocketOwner::User(UserId::generate())];
        let first = counts.open(&user).unwrap();
        let _second = counts.open(&user).unwrap();
        assert!(matches!(
            counts.open(&user),
            Err(ApiError::TooManySockets(2))
        ));
        assert!(counts
            .open(&[SocketOwner::User(UserId::generate())])
            .is_ok());
        drop(first);
        assert!(counts.open(&user).is_ok());
    }

    #[test]
    fn viewers_are_capped_per_session_and_per_owner_and_never_take_the_owners_places() {
        let counts = SocketCounts::new(LIMITS);
        let owner = UserId::generate();
        let viewer = |session| {
            [
                SocketOwner::SharedSession(session),
                SocketOwner::SharedBy(owner),
            ]
        };
        let (one, two) = (SessionId::generate(), SessionId::generate());
        let _a = counts.open(&viewer(one)).unwrap();
        let _b = counts.open(&viewer(one)).unwrap();
        assert!(
            matches!(counts.open(&viewer(one)), Err(ApiError::TooManyViewers(2))),
            "the session is full, whichever link the viewer came through"
        );
        let c = counts.open(&viewer(two)).unwrap();
        assert!(
            matches!(counts.open(&viewer(two)), Err(ApiError::TooManyViewers(3))),
            "the owner's viewers are full across their sessions"
        );
        let _mine = counts.open(&[SocketOwner::User(owner)]).unwrap();
        let _mine_too = counts.open(&[SocketOwner::User(owner)]).unwrap();
        drop(c);
        let refused_session = counts.open(&viewer(one));
        assert!(refused_session.is_err(), "a refusal takes no place");
        assert!(counts.open(&viewer(two)).is_ok());
    }
}
