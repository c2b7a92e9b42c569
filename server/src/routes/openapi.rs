//! `GET /api/openapi.json`: the OpenAPI document of the REST API.

use actix_web::HttpResponse;

/// `GET /api/openapi.json`.
pub async fn document() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"openapi": "3.1.0"}))
}
