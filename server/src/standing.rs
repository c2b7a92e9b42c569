//! A long-lived connection's standing (a session socket, a share link's socket, an AG-UI
//! event stream): the credential it was opened with, the announcements that may end it
//! ([`crate::auth::Endings`]), and the checks that keep it honest in between.
//!
//! A connection ends (a socket with 1008 and a reason, a stream by ending its body) the
//! moment an announcement says its credential ended (a sign-out, a revoke, a deleted share
//! link, on any instance), when its sign-in expires, and when a check against the store
//! finds the credential gone: after missed announcements, and before every frame a socket
//! acts on, so a frame sent in the instant before the announcement arrives is refused too.

use std::time::Duration;

use actix_ws::{CloseCode, CloseReason};

use crate::auth::{Auth, EndingsWatch, Reliance, Verdict};
use crate::domain::{now_ms, SessionId};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::Store;

/// Why a connection closes when a check finds its credential gone.
const NO_LONGER_VALID: &str = "the credential this socket was opened with is no longer valid";
/// Why a socket closes when its sign-in expires.
const EXPIRED: &str = crate::auth::endings::SIGN_IN_EXPIRED;

/// What one connection's right to go on rests on.
pub struct Standing {
    reliance: Reliance,
    watch: EndingsWatch,
    auth: Auth,
    /// Announcements may have been missed; set until a check against the store completes
    /// (a check cut short by another branch of the socket's loop is not lost).
    recheck_due: bool,
}

impl Standing {
    /// The standing of a connection relying on `reliance`, watching announcements from
    /// `watch` (taken before the credential's last check).
    pub fn new(reliance: Reliance, watch: EndingsWatch, auth: Auth) -> Self {
        Self {
            reliance,
            watch,
            auth,
            recheck_due: false,
        }
    }

    /// The close frame of a socket whose credential ended for `reason`.
    pub fn close(reason: &str) -> CloseReason {
        CloseReason {
            code: CloseCode::Policy,
            description: Some(reason.into()),
        }
    }

    /// Waits until the connection must end: its credential ended, expired, or a check
    /// after missed announcements found it gone. Never returns for a credential that
    /// holds.
    pub async fn ended<S: Store>(
        &mut self,
        state: &AppState<S>,
        session: SessionId,
    ) -> CloseReason {
        let expiry = self.reliance.expires_at_ms().map(until);
        let expired = async {
            match expiry {
                Some(wait) => tokio::time::sleep(wait).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(expired);
        loop {
            if self.recheck_due {
                // A storage hiccup is not the credential's fault: keep the socket; the
                // next announcement or frame checks again.
                if let Ok(false) = self.holds(state, session).await {
                    return Self::close(NO_LONGER_VALID);
                }
                self.recheck_due = false;
            }
            tokio::select! {
                _ = &mut expired => return Self::close(EXPIRED),
                verdict = self.watch.next_for(&self.reliance) => match verdict {
                    Verdict::Ended(reason) => return Self::close(reason),
                    Verdict::Recheck => self.recheck_due = true,
                },
            }
        }
    }

    /// Checks, before the socket acts on a client frame, that its credential still
    /// holds: `Ok(None)` to go on, `Ok(Some(close))` to close instead of acting, `Err`
    /// when the store cannot tell (the frame is refused, the socket stays).
    pub async fn before_acting<S: Store>(
        &self,
        state: &AppState<S>,
        session: SessionId,
    ) -> Result<Option<CloseReason>, ApiError> {
        if self
            .reliance
            .expires_at_ms()
            .is_some_and(|at| at <= now_ms())
        {
            return Ok(Some(Self::close(EXPIRED)));
        }
        match self.holds(state, session).await? {
            true => Ok(None),
            false => Ok(Some(Self::close(NO_LONGER_VALID))),
        }
    }

    /// Whether the credential still opens what the socket shows.
    async fn holds<S: Store>(
        &self,
        state: &AppState<S>,
        session: SessionId,
    ) -> Result<bool, ApiError> {
        match &self.reliance {
            Reliance::Caller(caller) => Ok(self.auth.still_valid(caller).await?),
            Reliance::ShareLink { token, .. } => {
                match crate::routes::open_share(state, *token).await {
                    Ok((share, _)) => Ok(share.session == session),
                    Err(ApiError::NotFound(_)) => Ok(false),
                    Err(other) => Err(other),
                }
            }
        }
    }
}

/// How long until `at_ms` (ms since the epoch); zero if it has passed.
fn until(at_ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(at_ms.saturating_sub(now_ms())).unwrap_or(0))
}
