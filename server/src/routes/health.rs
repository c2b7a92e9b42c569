//! Liveness, server facts, and the JSON 404 for unknown API paths.

use actix_web::{web, HttpResponse};
use shared::api::ServerInfo;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::Store;

/// `GET /healthz`.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"status": "ok"}))
}

/// `GET /api/info`: engine and model, for the page's label.
pub async fn info<S: Store>(
    state: web::Data<AppState<S>>,
    _caller: Caller,
) -> web::Json<ServerInfo> {
    web::Json(state.info.clone())
}

/// A method an endpoint does not take.
pub async fn method_not_allowed() -> Result<HttpResponse, ApiError> {
    Err(ApiError::MethodNotAllowed)
}

/// Any other `/api` path.
pub async fn api_not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound(
        "no such API endpoint; see docs/protocol.md".into(),
    ))
}
