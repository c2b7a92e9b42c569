//! Signing the page in and out, and who the caller is.
//!
//! `POST /api/auth/login {token}` exchanges an API token for the sign-in cookie (a fresh
//! random value; only its hash is stored, with an expiry); `POST /api/auth/logout`
//! deletes that row and the cookie; `GET /api/auth/me` names the caller.

use actix_web::{web, HttpRequest, HttpResponse};
use shared::api::{CurrentUser, ErrorBody, LoginBody};

use super::JsonBody;
use crate::auth::{sign_in, Auth, AuthMode, Caller, Credential, SecretToken};
use crate::domain::{now_ms, TokenHash};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::{Ending, Store};

/// `POST /api/auth/login` `{token}` → 200 with the user and the cookie.
#[utoipa::path(post, path = "/api/auth/login", tag = "auth", request_body = LoginBody, responses(
    (status = 200, description = "Signed in: `Set-Cookie: tandem_session=…; HttpOnly; SameSite=Strict`", body = CurrentUser),
    (status = 400, description = "Malformed body, or the server runs with `--auth none`", body = ErrorBody),
    (status = 401, description = "`invalid_token`: the token is unknown or its user revoked", body = ErrorBody),
))]
pub async fn login<S: Store>(
    state: web::Data<AppState<S>>,
    auth: web::Data<Auth>,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let request = body.request().clone();
    let login: LoginBody = body.read(state.limits.max_body_bytes).await?;
    if auth.mode() == AuthMode::None {
        return Err(ApiError::BadRequest(
            "this server runs without sign-in (--auth none); nothing to sign in to".into(),
        ));
    }
    let token = login.token.trim().to_string();
    let caller = match auth.authenticate(Some(Ok(token)), None).await {
        Err(ApiError::Unauthorized) => return Err(ApiError::InvalidToken),
        other => other?,
    };
    let cookie = SecretToken::cookie();
    let ttl = state.sign_in_ttl;
    let expires = now_ms().saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
    state
        .store
        .create_sign_in(cookie.hash(), caller.user, now_ms(), expires)
        .await?;
    let mut user = current(&caller, auth.mode());
    user.budget = state.runner.budget(caller.user).await?;
    Ok(HttpResponse::Ok()
        .cookie(sign_in::issue(cookie.expose(), ttl, &request))
        .json(user))
}

/// `POST /api/auth/logout` → 204; the sign-in row is deleted and the cookie cleared, and
/// every socket signed in with it closes.
#[utoipa::path(post, path = "/api/auth/logout", tag = "auth", responses(
    (status = 204, description = "Signed out (also when there was nothing to sign out of)"),
))]
pub async fn logout<S: Store>(
    state: web::Data<AppState<S>>,
    request: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    if let Some(value) = sign_in::cookie_value(&request) {
        let cookie = TokenHash::of(&value);
        if state.store.delete_sign_in(cookie).await? {
            // Every socket and stream signed in with it ends now, not at its next request.
            state.endings.announce(Ending::SignedOut(cookie));
        }
    }
    Ok(HttpResponse::NoContent()
        .cookie(sign_in::clear(&request))
        .finish())
}

/// `GET /api/auth/me` → who the caller is.
#[utoipa::path(get, path = "/api/auth/me", tag = "auth", responses(
    (status = 200, description = "The caller, with what is left of their budget", body = CurrentUser),
))]
pub async fn me<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
) -> Result<web::Json<CurrentUser>, ApiError> {
    let mut user = current(&caller, state.auth_mode);
    user.budget = state.runner.budget(caller.user).await?;
    Ok(web::Json(user))
}

fn current(caller: &Caller, mode: AuthMode) -> CurrentUser {
    CurrentUser {
        id: caller.user.to_string(),
        name: caller.name.to_string(),
        auth: mode.as_str().into(),
        budget: Vec::new(),
        signed_in_with: match caller.credential {
            Credential::None => "none",
            Credential::Bearer(_) => "token",
            Credential::Cookie { .. } => "cookie",
        }
        .into(),
    }
}
