//! The REST calls the page makes: signing in and out, server info, and listing, reading,
//! creating and deleting sessions.
//!
//! Every call returns the decoded body or an [`ApiError`] read from the server's error body.
//! A call answered `401 unauthorized` (the sign-in expired or was revoked) also tells the
//! handler set with [`on_unauthorized`], so the page can ask to sign in again. Messages and
//! answers go over the session socket, not through here.

use std::cell::RefCell;

use gloo_net::http::{Request, Response};
use serde::de::DeserializeOwned;
use shared::api::{
    CreateSession, CurrentUser, ErrorBody, LoginBody, ServerInfo, SessionDetail, SessionList,
    SessionSummary,
};

use super::ApiError;

thread_local! {
    /// Called when a request is refused for want of a valid sign-in.
    static ON_UNAUTHORIZED: RefCell<Option<Box<dyn Fn()>>> = RefCell::new(None);
}

/// Sets what happens when the server says the page is not signed in.
pub fn on_unauthorized(handler: impl Fn() + 'static) {
    ON_UNAUTHORIZED.with(|slot| *slot.borrow_mut() = Some(Box::new(handler)));
}

/// `GET /api/auth/me`: who the page acts for (401 when not signed in).
pub async fn me() -> Result<CurrentUser, ApiError> {
    json(send(Request::get("/api/auth/me").build()).await?).await
}

/// `POST /api/auth/login`: exchanges an API token for the sign-in cookie.
pub async fn sign_in(token: &str) -> Result<CurrentUser, ApiError> {
    let body = LoginBody {
        token: token.trim().to_string(),
    };
    json(send(Request::post("/api/auth/login").json(&body)).await?).await
}

/// `POST /api/auth/logout`: ends the sign-in (server-side) and clears the cookie.
pub async fn sign_out() -> Result<(), ApiError> {
    send(Request::post("/api/auth/logout").build()).await?;
    Ok(())
}

/// `GET /api/info`: the engine and model this server runs.
pub async fn server_info() -> Result<ServerInfo, ApiError> {
    json(send(Request::get("/api/info").build()).await?).await
}

/// `GET /api/sessions`: all sessions, newest first.
pub async fn list_sessions() -> Result<Vec<SessionSummary>, ApiError> {
    let list: SessionList = json(send(Request::get("/api/sessions").build()).await?).await?;
    Ok(list.sessions)
}

/// `POST /api/sessions` with `{}`: a new, empty session.
pub async fn create_session() -> Result<SessionSummary, ApiError> {
    let request = Request::post("/api/sessions").json(&CreateSession::default());
    json(send(request).await?).await
}

/// `GET /api/sessions/{id}`: one session with its pending questions.
pub async fn get_session(id: &str) -> Result<SessionDetail, ApiError> {
    json(send(Request::get(&format!("/api/sessions/{id}")).build()).await?).await
}

/// `DELETE /api/sessions/{id}`: removes a session, stopping its run first.
pub async fn delete_session(id: &str) -> Result<(), ApiError> {
    send(Request::delete(&format!("/api/sessions/{id}")).build()).await?;
    Ok(())
}

/// Sends a request; a non-2xx reply becomes the server's error.
async fn send(request: Result<Request, gloo_net::Error>) -> Result<Response, ApiError> {
    let response = request
        .map_err(ApiError::network)?
        .send()
        .await
        .map_err(ApiError::network)?;
    if response.ok() {
        return Ok(response);
    }
    let status = response.status();
    match response.json::<ErrorBody>().await {
        Ok(body) => {
            if body.error.code == "unauthorized" {
                ON_UNAUTHORIZED.with(|slot| {
                    if let Some(handler) = slot.borrow().as_ref() {
                        handler();
                    }
                });
            }
            Err(body.error.into())
        }
        Err(_) => Err(ApiError::new(
            "http_error",
            format!("The server answered {status} {}", response.status_text()),
        )),
    }
}

async fn json<T: DeserializeOwned>(response: Response) -> Result<T, ApiError> {
    response.json().await.map_err(ApiError::bad_response)
}
