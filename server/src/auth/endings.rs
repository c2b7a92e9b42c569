//! Connections that outlive a request (session sockets, share-link sockets, AG-UI
//! streams) end the moment a credential they relied on ends.
//!
//! A request is authenticated once; a socket lives on. So whatever ends a credential
//! announces it here: signing out ([`Ending::SignedOut`]), deleting a share link
//! ([`Ending::ShareDeleted`]), and revoking a user ([`Ending::UserRevoked`]), which
//! `tandem users revoke` does from another process and the store's change feed brings
//! (PostgreSQL: `NOTIFY` in the revoking transaction, to every instance; SQLite: the
//! store watches the users table). Each connection states what it relies on
//! ([`Reliance`]) and watches the announcements ([`EndingsWatch`]); a sign-in's expiry
//! is a deadline it keeps itself. When announcements may have been missed (the change
//! feed dropped, or a connection fell behind the channel), connections check their
//! credential against the store again ([`Verdict::Recheck`]).

use tokio::sync::broadcast;

use super::{Caller, Credential};
use crate::domain::{TokenHash, UserId};
use crate::store::Ending;

/// Announcements held for connections that fall behind; one that falls further behind
/// checks its credential against the store instead.
const CAPACITY: usize = 256;

/// What one announcement says.
#[derive(Debug, Clone)]
enum Notice {
    Ended(Ending),
    /// Some announcements may have been missed: every connection checks again.
    Recheck,
}

/// Where credentials that ended are announced to this instance's connections.
#[derive(Clone)]
pub struct Endings {
    sender: broadcast::Sender<Notice>,
}

impl Default for Endings {
    fn default() -> Self {
        Self {
            sender: broadcast::channel(CAPACITY).0,
        }
    }
}

impl Endings {
    /// Tells every connection of this instance that `ending` happened.
    pub fn announce(&self, ending: Ending) {
        // No receivers means no connection to end.
        let _ = self.sender.send(Notice::Ended(ending));
    }

    /// Tells every connection to check its credential again: announcements may have been
    /// lost (the change feed's connection dropped).
    pub fn recheck_all(&self) {
        let _ = self.sender.send(Notice::Recheck);
    }

    /// Starts watching. A connection watches before it checks its credential one last
    /// time, so an ending between that check and the watch cannot be missed.
    pub fn watch(&self) -> EndingsWatch {
        EndingsWatch {
            receiver: self.sender.subscribe(),
        }
    }
}

/// One connection's view of the announcements.
pub struct EndingsWatch {
    receiver: broadcast::Receiver<Notice>,
}

/// What an announcement means for a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A credential it relied on ended; the reason to close with.
    Ended(&'static str),
    /// Announcements may have been missed: check the credential against the store.
    Recheck,
}

impl EndingsWatch {
    /// Waits for the next announcement that concerns `reliance` (forever if none does).
    pub async fn next_for(&mut self, reliance: &Reliance) -> Verdict {
        loop {
            match self.receiver.recv().await {
                Ok(Notice::Ended(ending)) => {
                    if let Some(reason) = reliance.ended_by(&ending) {
                        return Verdict::Ended(reason);
                    }
                }
                Ok(Notice::Recheck) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    return Verdict::Recheck
                }
                Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
            }
        }
    }
}

/// What a connection's right to go on rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reliance {
    /// The caller's own credential (nothing, under `--auth none`).
    Caller(Caller),
    /// A share link, by its id and its token's hash, to a session of `owner`.
    ShareLink {
        id: String,
        token: TokenHash,
        owner: UserId,
    },
}

/// Why a connection closes, as its close frame says.
pub const SIGNED_OUT: &str = "signed out";
pub const REVOKED: &str = "this user was revoked";
pub const SIGN_IN_EXPIRED: &str = "the sign-in expired";
pub const SHARE_DELETED: &str = "this share link was deleted";
pub const OWNER_REVOKED: &str = "this share link's owner was revoked";

impl Reliance {
    /// The reason `ending` ends a connection relying on this, if it does.
    pub fn ended_by(&self, ending: &Ending) -> Option<&'static str> {
        match (self, ending) {
            (Self::Caller(caller), Ending::UserRevoked(user)) if caller.user == *user => {
                Some(REVOKED)
            }
            (Self::Caller(caller), Ending::SignedOut(cookie)) => match &caller.credential {
                Credential::Cookie { hash, .. } if hash == cookie => Some(SIGNED_OUT),
                _ => None,
            },
            (Self::ShareLink { owner, .. }, Ending::UserRevoked(user)) if owner == user => {
                Some(OWNER_REVOKED)
            }
            (Self::ShareLink { id, .. }, Ending::ShareDeleted(deleted)) if id == deleted => {
                Some(SHARE_DELETED)
            }
            _ => None,
        }
    }

    /// When the credential expires by itself (a sign-in), in ms since the epoch.
    pub fn expires_at_ms(&self) -> Option<i64> {
        match self {
            Self::Caller(Caller {
                credential: Credential::Cookie { expires_at_ms, .. },
                ..
            }) => Some(*expires_at_ms),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::UserName;

    fn caller(user: UserId, credential: Credential) -> Reliance {
        Reliance::Caller(Caller {
            user,
            name: UserName::parse("ada").unwrap(),
            credential,
        })
    }

    #[test]
    fn each_ending_ends_only_what_relied_on_it() {
        let (ada, bob) = (UserId::generate(), UserId::generate());
        let cookie = TokenHash::of("cookie");
        let signed_in = caller(
            ada,
            Credential::Cookie {
                hash: cookie,
                expires_at_ms: 99,
            },
        );
        let token = caller(ada, Credential::Bearer(TokenHash::of("tdm_x")));
        let link = Reliance::ShareLink {
            id: "shr_1".into(),
            token: TokenHash::of("tds_x"),
            owner: ada,
        };
        let revoked = Ending::UserRevoked(ada);
        assert_eq!(signed_in.ended_by(&revoked), Some(REVOKED));
        assert_eq!(token.ended_by(&revoked), Some(REVOKED));
        assert_eq!(link.ended_by(&revoked), Some(OWNER_REVOKED));
        let other = Ending::UserRevoked(bob);
        assert!([&signed_in, &token, &link]
            .iter()
            .all(|r| r.ended_by(&other).is_none()));
        let signed_out = Ending::SignedOut(cookie);
        assert_eq!(signed_in.ended_by(&signed_out), Some(SIGNED_OUT));
        assert_eq!(token.ended_by(&signed_out), None);
        let elsewhere = Ending::SignedOut(TokenHash::of("another browser"));
        assert_eq!(signed_in.ended_by(&elsewhere), None);
        let deleted = Ending::ShareDeleted("shr_1".into());
        assert_eq!(link.ended_by(&deleted), Some(SHARE_DELETED));
        assert_eq!(link.ended_by(&Ending::ShareDeleted("shr_2".into())), None);
        assert_eq!(signed_in.expires_at_ms(), Some(99));
        assert_eq!(token.expires_at_ms(), None);
    }

    #[tokio::test]
    async fn a_watch_wakes_for_its_own_ending_and_rechecks_when_behind() {
        let endings = Endings::default();
        let ada = UserId::generate();
        let reliance = caller(ada, Credential::Bearer(TokenHash::of("tdm_x")));
        let mut watch = endings.watch();
        endings.announce(Ending::UserRevoked(UserId::generate()));
        endings.announce(Ending::UserRevoked(ada));
        assert_eq!(watch.next_for(&reliance).await, Verdict::Ended(REVOKED));
        endings.recheck_all();
        assert_eq!(watch.next_for(&reliance).await, Verdict::Recheck);
        for _ in 0..CAPACITY + 1 {
            endings.announce(Ending::ShareDeleted("shr_x".into()));
        }
        assert_eq!(
            watch.next_for(&reliance).await,
            Verdict::Recheck,
            "a watch that fell behind checks again"
        );
    }
}
