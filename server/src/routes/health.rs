//! Liveness, server facts, and the JSON 404 for unknown API paths.

use actix_web::{web, HttpResponse};
use shared::api::{ErrorBody, McpServerInfo, ModelList, ServerInfo};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::Store;

/// `GET /healthz`.
#[utoipa::path(get, path = "/healthz", tag = "server", responses(
    (status = 200, description = "The server is up", body = Object, example = json!({"status": "ok"})),
))]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"status": "ok"}))
}

/// `GET /readyz`: whether this instance can reach its database (for a load balancer, which
/// should send it nothing while it cannot).
#[utoipa::path(get, path = "/readyz", tag = "server", responses(
    (status = 200, description = "The database answers", body = Object, example = json!({"status": "ready"})),
    (status = 503, description = "The database cannot be reached", body = ErrorBody),
))]
pub async fn readyz<S: Store>(state: web::Data<AppState<S>>) -> Result<HttpResponse, ApiError> {
    state.store.ping().await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({"status": "ready"})))
}

/// `GET /api/info`: engine and model, for the page's label.
#[utoipa::path(get, path = "/api/info", tag = "server", responses(
    (status = 200, description = "What this server runs", body = ServerInfo),
))]
pub async fn info<S: Store>(
    state: web::Data<AppState<S>>,
    _caller: Caller,
) -> web::Json<ServerInfo> {
    let mut info = state.info.clone();
    info.mcp_servers = state
        .runner
        .mcp_statuses()
        .into_iter()
        .map(|(name, status)| McpServerInfo {
            name,
            connected: status.is_ok(),
            tools: status.as_ref().map_or(0, |tools| *tools),
            error: status.err(),
        })
        .collect();
    web::Json(info)
}

/// `GET /api/models`: the models a session may pick.
#[utoipa::path(get, path = "/api/models", tag = "server", responses(
    (status = 200, description = "The models a message may pick (`model`), the default first", body = ModelList),
))]
pub async fn models<S: Store>(
    state: web::Data<AppState<S>>,
    _caller: Caller,
) -> web::Json<ModelList> {
    let models = state.runner.models().to_vec();
    let without_images = models
        .iter()
        .filter(|model| !state.runner.takes_images(model))
        .cloned()
        .collect();
    web::Json(ModelList {
        engine: state.info.engine.clone(),
        default: models[0].clone(),
        models,
        without_images,
    })
}

/// Any other `/api` path.
pub async fn api_not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound(
        "no such API endpoint; see docs/protocol.md".into(),
    ))
}
