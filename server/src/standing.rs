//! A long-lived connection's standing (a session socket, a share link's socket, an AG-UI
//! event stream): the credential it was opened with, the announcements that may end it
//! ([`crate::auth::Endings`]), and the checks that keep it honest in between.
//!
//! A connection ends (a socket with 1008 and a reason, a stream by ending its body) the
//! moment an announcement says its credential ended (a sign-out, a revoke, a deleted share
//! link, on any instance), when its sign-in expires, and when a check against the store
//! finds the credential gone: after missed announcements, and before every frame a socket
//! acts on, so a frame sent in the instant before the announcement arrives is refused too.
//!
//! The announcements are watched by a small task of the connection's own, which hands the
//! connection's loop one reason when it must end. The loop's branch is then a oneshot
//! receiver: polling it on every wake of the loop costs nothing shared, where receiving
//! from the broadcast channel itself would take its lock each time. A connection nothing
//! can end (`--auth none`) has no such task.

use std::sync::Arc;
use std::time::Duration;

use actix_ws::{CloseCode, CloseReason};
use tokio::sync::oneshot;

use crate::auth::{Auth, Caller, Credential, EndingsWatch, Reliance, Verdict};
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
    auth: Auth,
    /// The reason the connection must end, once its watcher finds one; `None` when
    /// nothing can end it.
    ended: Option<oneshot::Receiver<&'static str>>,
}

impl Standing {
    /// The standing of a connection to `session` relying on `reliance`, watching
    /// announcements from `watch` (taken before the credential's last check).
    pub fn new<S: Store>(
        reliance: Reliance,
        watch: EndingsWatch,
        auth: Auth,
        state: Arc<AppState<S>>,
        session: SessionId,
    ) -> Self {
        Self::watching(reliance, watch, auth, state, Some(session))
    }

    /// The standing of a connection to no one session (the caller's session list),
    /// relying on the caller's own credential.
    pub fn of_caller<S: Store>(
        caller: Caller,
        watch: EndingsWatch,
        auth: Auth,
        state: Arc<AppState<S>>,
    ) -> Self {
        Self::watching(Reliance::Caller(caller), watch, auth, state, None)
    }

    fn watching<S: Store>(
        reliance: Reliance,
        watch: EndingsWatch,
        auth: Auth,
        state: Arc<AppState<S>>,
        session: Option<SessionId>,
    ) -> Self {
        let nothing_can_end = matches!(
            reliance,
            Reliance::Caller(Caller {
                credential: Credential::None,
                ..
            })
        );
        let ended = (!nothing_can_end).then(|| {
            let (tell, ended) = oneshot::channel();
            let watcher = Watcher {
                reliance: reliance.clone(),
                auth: auth.clone(),
                watch,
                state,
                session,
            };
            tokio::spawn(watcher.run(tell));
            ended
        });
        Self {
            reliance,
            auth,
            ended,
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
    /// holds; cheap to call again on every wake of a loop.
    pub async fn ended(&mut self) -> CloseReason {
        match &mut self.ended {
            Some(ended) => match ended.await {
                Ok(reason) => Self::close(reason),
                // The watcher is gone without a reason (the runtime is stopping).
                Err(_) => std::future::pending().await,
            },
            None => std::future::pending().await,
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
        match holds(&self.reliance, &self.auth, state, Some(session)).await? {
            true => Ok(None),
            false => Ok(Some(Self::close(NO_LONGER_VALID))),
        }
    }
}

/// A connection's watcher: what it relies on and the announcements to watch.
struct Watcher<S> {
    reliance: Reliance,
    auth: Auth,
    watch: EndingsWatch,
    state: Arc<AppState<S>>,
    /// The session a share link must still open (`None`: the connection shows none).
    session: Option<SessionId>,
}

impl<S: Store> Watcher<S> {
    /// Tells the connection why it must end, once it must; ends early when the
    /// connection ends first (it drops its receiver).
    async fn run(mut self, mut tell: oneshot::Sender<&'static str>) {
        tokio::select! {
            _ = tell.closed() => {}
            reason = self.until_ended() => {
                let _ = tell.send(reason);
            }
        }
    }

    async fn until_ended(&mut self) -> &'static str {
        let expiry = self.reliance.expires_at_ms().map(until);
        let expired = async {
            match expiry {
                Some(wait) => tokio::time::sleep(wait).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(expired);
        loop {
            tokio::select! {
                _ = &mut expired => return EXPIRED,
                verdict = self.watch.next_for(&self.reliance) => match verdict {
                    Verdict::Ended(reason) => return reason,
                    // A storage hiccup is not the credential's fault: the connection
                    // stays; the next announcement or frame checks again.
                    Verdict::Recheck => {
                        let checked = holds(&self.reliance, &self.auth, &self.state, self.session);
                        if let Ok(false) = checked.await {
                            return NO_LONGER_VALID;
                        }
                    }
                },
            }
        }
    }
}

/// Whether the credential still opens what the connection shows.
async fn holds<S: Store>(
    reliance: &Reliance,
    auth: &Auth,
    state: &AppState<S>,
    session: Option<SessionId>,
) -> Result<bool, ApiError> {
    match reliance {
        Reliance::Caller(caller) => Ok(auth.still_valid(caller).await?),
        Reliance::ShareLink { token, .. } => match crate::access::open_share(state, *token).await {
            Ok((share, _)) => Ok(Some(share.session) == session),
            Err(ApiError::NotFound(_)) => Ok(false),
            Err(other) => Err(other),
        },
    }
}

/// How long until `at_ms` (ms since the epoch); zero if it has passed.
fn until(at_ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(at_ms.saturating_sub(now_ms())).unwrap_or(0))
}
