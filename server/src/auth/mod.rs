//! Who a request acts for.
//!
//! Under `--auth none` (allowed only on a loopback address) every request acts for the
//! built-in `local` user. Under `--auth token` a request carries either an API token
//! (`Authorization: Bearer tdm_…`) or the sign-in cookie the page got by exchanging a
//! token at `POST /api/auth/login`. Only SHA-256 hashes of both are stored; a match is
//! confirmed with a constant-time comparison. Handlers take a [`Caller`] argument: a
//! request without valid credentials never reaches them (401).
//!
//! This module decides identity only; what a user may see is decided where sessions are
//! read (`access::owned_session`).

mod caller;
pub mod cli;
pub mod endings;
mod secret;
pub mod sign_in;

use std::sync::Arc;

use futures_util::future::BoxFuture;

pub use caller::{Caller, Credential};
pub use endings::{Endings, EndingsWatch, Reliance, Verdict};
pub use secret::{SecretToken, SHARE_PREFIX};

use crate::domain::{now_ms, TokenHash, UserId, UserName};
use crate::error::ApiError;
use crate::store::{Store, StoreError, UserRow};

pub use crate::config::AuthMode;

/// What a credential lookup found: the user, the stored hash that matched, and when the
/// credential expires (sign-ins only).
struct Found {
    user: UserRow,
    stored: TokenHash,
    expires_at_ms: Option<i64>,
}

/// Looks credentials up; implemented for every [`Store`] so extractors need not know
/// the backend.
trait Credentials: Send + Sync {
    fn by_token(&self, hash: TokenHash) -> BoxFuture<'static, Lookup>;
    fn by_sign_in(&self, hash: TokenHash) -> BoxFuture<'static, Lookup>;
}

type Lookup = Result<Option<Found>, StoreError>;

struct StoreCredentials<S>(Arc<S>);

impl<S: Store> Credentials for StoreCredentials<S> {
    fn by_token(&self, hash: TokenHash) -> BoxFuture<'static, Lookup> {
        let store = self.0.clone();
        Box::pin(async move {
            let found = store.user_for_token(hash).await?;
            Ok(found.map(|(user, stored)| Found {
                user,
                stored,
                expires_at_ms: None,
            }))
        })
    }

    fn by_sign_in(&self, hash: TokenHash) -> BoxFuture<'static, Lookup> {
        let store = self.0.clone();
        Box::pin(async move {
            let found = store.user_for_sign_in(hash, now_ms()).await?;
            Ok(found.map(|found| Found {
                user: found.user,
                stored: found.stored,
                expires_at_ms: Some(found.expires_at_ms),
            }))
        })
    }
}

/// The authenticator every request consults (app data).
#[derive(Clone)]
pub struct Auth {
    mode: AuthMode,
    credentials: Arc<dyn Credentials>,
}

impl Auth {
    /// An authenticator over `store`.
    pub fn new<S: Store>(mode: AuthMode, store: Arc<S>) -> Self {
        Self {
            mode,
            credentials: Arc::new(StoreCredentials(store)),
        }
    }

    /// The mode.
    pub fn mode(&self) -> AuthMode {
        self.mode
    }

    /// The caller a bearer token or a sign-in cookie names. A bearer header wins over a
    /// cookie: an API client's explicit choice.
    pub async fn authenticate(
        &self,
        bearer: Option<Result<String, ()>>,
        cookie: Option<String>,
    ) -> Result<Caller, ApiError> {
        if self.mode == AuthMode::None {
            return Ok(Caller::local());
        }
        let (presented, is_cookie) = match (bearer, cookie) {
            (Some(Err(())), _) => return Err(ApiError::Unauthorized),
            (Some(Ok(token)), _) => (TokenHash::of(&token), false),
            (None, Some(cookie)) => (TokenHash::of(&cookie), true),
            (None, None) => return Err(ApiError::Unauthorized),
        };
        let found = if is_cookie {
            self.credentials.by_sign_in(presented).await?
        } else {
            self.credentials.by_token(presented).await?
        };
        match found {
            Some(found) if found.stored.matches(&presented) => Ok(Caller {
                user: found.user.id,
                name: found.user.name,
                credential: match found.expires_at_ms {
                    Some(expires_at_ms) if is_cookie => Credential::Cookie {
                        hash: presented,
                        expires_at_ms,
                    },
                    _ => Credential::Bearer(presented),
                },
            }),
            _ => Err(ApiError::Unauthorized),
        }
    }

    /// Whether the credential `caller` was authenticated with still names the same user:
    /// not signed out, expired or revoked since. Always true under `--auth none`.
    pub async fn still_valid(&self, caller: &Caller) -> Result<bool, StoreError> {
        let found = match &caller.credential {
            Credential::None => return Ok(true),
            Credential::Bearer(hash) => self.credentials.by_token(*hash).await?,
            Credential::Cookie { hash, .. } => self.credentials.by_sign_in(*hash).await?,
        };
        Ok(found.is_some_and(|found| found.user.id == caller.user))
    }
}

impl Caller {
    /// The caller of `--auth none`.
    pub fn local() -> Self {
        Self {
            user: UserId::LOCAL,
            name: UserName::parse_any(UserName::LOCAL).expect("`local` is a valid name"),
            credential: Credential::None,
        }
    }
}
