//! The REST calls the page makes: server info, and listing, reading, creating and deleting
//! sessions.
//!
//! Every call returns the decoded body or an [`ApiError`] read from the server's error body.
//! Messages and answers go over the session socket, not through here.

use gloo_net::http::{Request, Response};
use serde::de::DeserializeOwned;
use shared::api::{
    CreateSession, ErrorBody, ServerInfo, SessionDetail, SessionList, SessionSummary,
};

use super::ApiError;

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
        Ok(body) => Err(body.error.into()),
        Err(_) => Err(ApiError::new(
            "http_error",
            format!("The server answered {status} {}", response.status_text()),
        )),
    }
}

async fn json<T: DeserializeOwned>(response: Response) -> Result<T, ApiError> {
    response.json().await.map_err(ApiError::bad_response)
}
