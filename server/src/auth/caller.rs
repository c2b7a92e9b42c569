//! [`Caller`]: the user a request acts for, as a handler argument.

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;

use super::{sign_in, Auth};
use crate::domain::{TokenHash, UserId, UserName};
use crate::error::ApiError;

/// How the caller proved who they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// `--auth none`: nobody signs in.
    None,
    /// An API token in `Authorization: Bearer` (its hash).
    Bearer(TokenHash),
    /// The page's sign-in cookie (its hash), valid until `expires_at_ms`.
    Cookie { hash: TokenHash, expires_at_ms: i64 },
}

/// The user a request acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user: UserId,
    pub name: UserName,
    pub credential: Credential,
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let auth = request.app_data::<web::Data<Auth>>().cloned();
        let ambiguous = ambiguity(request);
        let bearer = bearer_token(request);
        let cookie = sign_in::cookie_value(request);
        Box::pin(async move {
            if let Some(why) = ambiguous {
                return Err(ApiError::BadRequest(why));
            }
            let auth = auth.ok_or(ApiError::Unauthorized)?;
            auth.authenticate(bearer, cookie).await
        })
    }
}

/// Why a request names no one credential, if it names two of a kind: two
/// `Authorization` headers, or two sign-in cookies. Which one counts would be the
/// server's guess (and a proxy's may differ), so the request is refused instead.
fn ambiguity(request: &HttpRequest) -> Option<String> {
    if request.headers().get_all(header::AUTHORIZATION).count() > 1 {
        return Some("send one `Authorization` header, not several".into());
    }
    (sign_in::cookie_count(request) > 1)
        .then(|| format!("send one `{}` cookie, not several", sign_in::COOKIE_NAME))
}

/// The token of an `Authorization: Bearer …` header; `Err` if the header is there but
/// is not a bearer token.
fn bearer_token(request: &HttpRequest) -> Option<Result<String, ()>> {
    let value = request.headers().get(header::AUTHORIZATION)?;
    let text = value.to_str().map_err(drop);
    Some(text.and_then(|text| {
        let (scheme, token) = text.trim().split_once(' ').ok_or(())?;
        let token = token.trim();
        if scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && token.len() <= 256 {
            Ok(token.to_string())
        } else {
            Err(())
        }
    }))
}
