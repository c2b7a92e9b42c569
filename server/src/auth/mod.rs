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
//! read (`routes::owned_session`).

mod caller;
pub mod cli;
mod secret;
pub mod sign_in;

use std::sync::Arc;

use futures_util::future::BoxFuture;

pub use caller::{Caller, Credential};
pub use secret::{SecretToken, SHARE_PREFIX};

use crate::domain::{now_ms, TokenHash, UserId, UserName};
use crate::error::ApiError;
use crate::store::{Store, StoreError, UserRow};

/// How requests are authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthMode {
    /// Nobody signs in; everything acts for the `local` user. Loopback addresses only.
    None,
    /// API tokens and sign-in cookies of users created with `tandem users add`.
    Token,
}

impl AuthMode {
    /// The wire and flag spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Token => "token",
        }
    }
}

/// Looks credentials up; implemented for every [`Store`] so extractors need not know
/// the backend.
trait Credentials: Send + Sync {
    fn by_token(&self, hash: TokenHash) -> BoxFuture<'static, Lookup>;
    fn by_sign_in(&self, hash: TokenHash) -> BoxFuture<'static, Lookup>;
}

type Lookup = Result<Option<(UserRow, TokenHash)>, StoreError>;

struct StoreCredentials<S>(Arc<S>);

impl<S: Store> Credentials for StoreCredentials<S> {
    fn by_token(&self, hash: TokenHash) -> BoxFuture<'static, Lookup> {
        let store = self.0.clone();
        Box::pin(async move { store.user_for_token(hash).await })
    }

    fn by_sign_in(&self, hash: TokenHash) -> BoxFuture<'static, Lookup> {
        let store = self.0.clone();
        Box::pin(async move { store.user_for_sign_in(hash, now_ms()).await })
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
        let (presented, credential) = match (bearer, cookie) {
            (Some(Err(())), _) => return Err(ApiError::Unauthorized),
            (Some(Ok(token)), _) => (TokenHash::of(&token), Credential::Bearer),
            (None, Some(cookie)) => {
                let hash = TokenHash::of(&cookie);
                (hash, Credential::Cookie(hash))
            }
            (None, None) => return Err(ApiError::Unauthorized),
        };
        let found = match credential {
            Credential::Bearer => self.credentials.by_token(presented).await?,
            _ => self.credentials.by_sign_in(presented).await?,
        };
        match found {
            Some((user, stored)) if stored.matches(&presented) => Ok(Caller {
                user: user.id,
                name: user.name,
                credential,
            }),
            _ => Err(ApiError::Unauthorized),
        }
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
