//! REST routes under `/api`, `/healthz`, and the built page.
//!
//! Handlers parse and validate input, call the runner or the store, and render JSON.
//! They hold no state of their own.

mod body;
mod health;
mod page;
mod runs;
mod sessions;

use actix_web::web;

use crate::error::ApiError;
use crate::store::Store;

pub use body::read_json;

/// Registers every route for backend `S`; `web_dir` holds the built page.
pub fn configure<S: Store>(cfg: &mut web::ServiceConfig, web_dir: std::path::PathBuf) {
    cfg.app_data(
        web::QueryConfig::default().error_handler(|error, _| {
            ApiError::BadRequest(format!("invalid query: {error}")).into()
        }),
    )
    .app_data(
        web::PathConfig::default().error_handler(|error, _| {
            ApiError::BadRequest(format!("invalid path: {error}")).into()
        }),
    )
    .route("/healthz", web::get().to(health::healthz))
    .route("/api/info", web::get().to(health::info::<S>))
    .service(
        web::scope("/api/sessions")
            .route("", web::post().to(sessions::create::<S>))
            .route("", web::get().to(sessions::list::<S>))
            .route("/{id}", web::get().to(sessions::get::<S>))
            .route("/{id}", web::delete().to(sessions::delete::<S>))
            .route("/{id}/events", web::get().to(sessions::events::<S>))
            .route("/{id}/messages", web::post().to(runs::post_message::<S>))
            .route(
                "/{id}/interrupts/{interrupt}",
                web::post().to(runs::answer::<S>),
            )
            .route("/{id}/cancel", web::post().to(runs::cancel::<S>))
            .route("/{id}/ws", web::get().to(crate::ws::connect::<S>)),
    )
    .service(web::scope("/api").default_service(web::to(health::api_not_found)));
    page::configure(cfg, web_dir);
}

/// Parses a session id from a path segment.
pub(crate) fn session_id(text: &str) -> Result<crate::domain::SessionId, ApiError> {
    crate::domain::SessionId::parse(text).map_err(|e| ApiError::BadRequest(e.to_string()))
}
