//! REST routes under `/api`, `/healthz`, `/readyz`, and the built page.
//!
//! [`ROUTES`] is the one table of every endpoint with who may call it and the query
//! parameters it takes (any other is refused, [`query`]); `configure` registers exactly
//! its entries, and the test suite generates its auth and isolation
//! checks from it, so a route cannot be added without them. Handlers parse and validate
//! input, call the runner or the store, and render JSON; a handler of a
//! [`Access::User`] route takes a [`Caller`](crate::auth::Caller) and reaches sessions
//! only through [`crate::access::owned_session`].

mod agui;
mod attachments;
mod auth;
mod body;
mod branches;
mod export;
mod feedback;
mod health;
mod instructions;
mod metrics;
pub mod openapi;
mod page;
mod query;
mod queue;
mod runs;
mod sessions;
mod shares;
mod state;
mod usage;
mod webhooks;

use actix_web::web;

use crate::error::ApiError;
use crate::store::Store;

pub use body::{parse_json, read_json};
pub use page::Page;

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone who reaches the server (the edge still checks `Host` and `Origin`).
    Public,
    /// A signed-in user (any user under `--auth none`), who sees only their sessions.
    User,
    /// Whoever holds a share link (the `{token}` in the path): one session, read-only.
    Shared,
}

/// One endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteInfo {
    pub method: &'static str,
    /// The path pattern, actix style (`{id}`).
    pub path: &'static str,
    pub access: Access,
    /// The query parameters it takes; any other is refused with 400 ([`query`]).
    pub query: &'static [&'static str],
}

const fn route(method: &'static str, path: &'static str, access: Access) -> RouteInfo {
    RouteInfo {
        method,
        path,
        access,
        query: &[],
    }
}

impl RouteInfo {
    /// This route, taking the query parameters `names`.
    const fn taking(self, names: &'static [&'static str]) -> Self {
        Self {
            query: names,
            ..self
        }
    }
}

/// Every endpoint Tandem serves besides the page's files.
pub const ROUTES: &[RouteInfo] = &[
    route("GET", "/healthz", Access::Public),
    route("GET", "/readyz", Access::Public),
    route("GET", "/metrics", Access::Public),
    route("GET", "/api/openapi.json", Access::Public),
    route("POST", "/api/auth/login", Access::Public),
    route("POST", "/api/auth/logout", Access::Public),
    route("GET", "/api/auth/me", Access::User),
    route("GET", "/api/info", Access::User),
    route("GET", "/api/models", Access::User),
    route("POST", "/api/sessions", Access::User),
    route("GET", "/api/sessions", Access::User).taking(&["q"]),
    route("GET", "/api/sessions/stream", Access::User),
    route("GET", "/api/sessions/{id}", Access::User),
    route("PATCH", "/api/sessions/{id}", Access::User),
    route("DELETE", "/api/sessions/{id}", Access::User),
    route("POST", "/api/sessions/{id}/fork", Access::User),
    route("GET", "/api/sessions/{id}/branches", Access::User),
    route("GET", "/api/sessions/{id}/events", Access::User).taking(&["after", "limit"]),
    route("GET", "/api/sessions/{id}/export", Access::User).taking(&["format"]),
    route("GET", "/api/sessions/{id}/preview", Access::User),
    route("GET", "/api/sessions/{id}/webhooks", Access::User),
    route("POST", "/api/sessions/{id}/shares", Access::User),
    route("GET", "/api/sessions/{id}/shares", Access::User),
    route("DELETE", "/api/sessions/{id}/shares/{share}", Access::User),
    route("POST", "/api/sessions/{id}/messages", Access::User),
    route(
        "POST",
        "/api/sessions/{id}/messages/{message}/edit",
        Access::User,
    ),
    route(
        "POST",
        "/api/sessions/{id}/runs/{run}/regenerate",
        Access::User,
    ),
    route(
        "POST",
        "/api/sessions/{id}/runs/{run}/continue",
        Access::User,
    ),
    route(
        "POST",
        "/api/sessions/{id}/runs/{run}/feedback",
        Access::User,
    ),
    route("GET", "/api/feedback", Access::User).taking(&["since", "rating", "limit"]),
    route(
        "POST",
        "/api/sessions/{id}/interrupts/{interrupt}",
        Access::User,
    ),
    route("POST", "/api/sessions/{id}/cancel", Access::User),
    route("GET", "/api/sessions/{id}/queue", Access::User),
    route("GET", "/api/sessions/{id}/state", Access::User),
    route("GET", "/api/instructions", Access::User),
    route("PUT", "/api/instructions", Access::User),
    route("GET", "/api/sessions/{id}/instructions", Access::User),
    route("PUT", "/api/sessions/{id}/instructions", Access::User),
    route("PATCH", "/api/sessions/{id}/state", Access::User),
    route("GET", "/api/sessions/{id}/usage", Access::User),
    route("POST", "/api/sessions/{id}/attachments", Access::User).taking(&["name"]),
    route("GET", "/api/attachments/{attachment}", Access::User),
    route("PATCH", "/api/sessions/{id}/queue/{queued}", Access::User),
    route("DELETE", "/api/sessions/{id}/queue/{queued}", Access::User),
    route("GET", "/api/sessions/{id}/ws", Access::User).taking(&["after"]),
    route("POST", "/api/agui", Access::User),
    route("GET", "/api/shared/{token}", Access::Shared),
    route("GET", "/api/shared/{token}/ws", Access::Shared).taking(&["after"]),
    route(
        "GET",
        "/api/shared/{token}/attachments/{attachment}",
        Access::Shared,
    ),
];

/// The handler of one table entry.
fn handler<S: Store>(info: &RouteInfo) -> actix_web::Route {
    match (info.method, info.path) {
        ("GET", "/healthz") => web::get().to(health::healthz),
        ("GET", "/readyz") => web::get().to(health::readyz::<S>),
        ("GET", "/metrics") => web::get().to(metrics::metrics::<S>),
        ("GET", "/api/openapi.json") => web::get().to(openapi::document),
        ("POST", "/api/auth/login") => web::post().to(auth::login::<S>),
        ("POST", "/api/auth/logout") => web::post().to(auth::logout::<S>),
        ("GET", "/api/auth/me") => web::get().to(auth::me::<S>),
        ("GET", "/api/info") => web::get().to(health::info::<S>),
        ("GET", "/api/models") => web::get().to(health::models::<S>),
        ("POST", "/api/sessions") => web::post().to(sessions::create::<S>),
        ("GET", "/api/sessions") => web::get().to(sessions::list::<S>),
        ("GET", "/api/sessions/stream") => web::get().to(sessions::stream::<S>),
        ("GET", "/api/sessions/{id}") => web::get().to(sessions::get::<S>),
        ("PATCH", "/api/sessions/{id}") => web::patch().to(sessions::rename::<S>),
        ("DELETE", "/api/sessions/{id}") => web::delete().to(sessions::delete::<S>),
        ("POST", "/api/sessions/{id}/fork") => web::post().to(branches::fork::<S>),
        ("GET", "/api/sessions/{id}/branches") => web::get().to(branches::list::<S>),
        ("POST", "/api/sessions/{id}/messages/{message}/edit") => {
            web::post().to(branches::edit::<S>)
        }
        ("POST", "/api/sessions/{id}/runs/{run}/regenerate") => {
            web::post().to(branches::regenerate::<S>)
        }
        ("POST", "/api/sessions/{id}/runs/{run}/continue") => {
            web::post().to(runs::continue_run::<S>)
        }
        ("POST", "/api/sessions/{id}/runs/{run}/feedback") => web::post().to(feedback::give::<S>),
        ("GET", "/api/feedback") => web::get().to(feedback::list::<S>),
        ("GET", "/api/sessions/{id}/events") => web::get().to(sessions::events::<S>),
        ("GET", "/api/sessions/{id}/export") => web::get().to(export::export::<S>),
        ("GET", "/api/sessions/{id}/preview") => web::get().to(export::preview::<S>),
        ("GET", "/api/sessions/{id}/webhooks") => web::get().to(webhooks::deliveries::<S>),
        ("POST", "/api/sessions/{id}/shares") => web::post().to(shares::create::<S>),
        ("GET", "/api/sessions/{id}/shares") => web::get().to(shares::list::<S>),
        ("DELETE", "/api/sessions/{id}/shares/{share}") => web::delete().to(shares::delete::<S>),
        ("GET", "/api/shared/{token}") => web::get().to(shares::shared::<S>),
        ("GET", "/api/shared/{token}/ws") => web::get().to(crate::ws::connect_shared::<S>),
        ("POST", "/api/sessions/{id}/messages") => web::post().to(runs::post_message::<S>),
        ("POST", "/api/sessions/{id}/interrupts/{interrupt}") => web::post().to(runs::answer::<S>),
        ("POST", "/api/sessions/{id}/cancel") => web::post().to(runs::cancel::<S>),
        ("GET", "/api/sessions/{id}/queue") => web::get().to(queue::list::<S>),
        ("GET", "/api/sessions/{id}/state") => web::get().to(state::get::<S>),
        ("GET", "/api/instructions") => web::get().to(instructions::get_own::<S>),
        ("PUT", "/api/instructions") => web::put().to(instructions::put_own::<S>),
        ("GET", "/api/sessions/{id}/instructions") => web::get().to(instructions::get_session::<S>),
        ("PUT", "/api/sessions/{id}/instructions") => web::put().to(instructions::put_session::<S>),
        ("PATCH", "/api/sessions/{id}/state") => web::patch().to(state::patch::<S>),
        ("GET", "/api/sessions/{id}/usage") => web::get().to(usage::usage::<S>),
        ("POST", "/api/sessions/{id}/attachments") => web::post().to(attachments::upload::<S>),
        ("GET", "/api/attachments/{attachment}") => web::get().to(attachments::download::<S>),
        ("GET", "/api/shared/{token}/attachments/{attachment}") => {
            web::get().to(attachments::shared_download::<S>)
        }
        ("PATCH", "/api/sessions/{id}/queue/{queued}") => web::patch().to(queue::edit::<S>),
        ("DELETE", "/api/sessions/{id}/queue/{queued}") => web::delete().to(queue::withdraw::<S>),
        ("GET", "/api/sessions/{id}/ws") => web::get().to(crate::ws::connect::<S>),
        ("POST", "/api/agui") => web::post().to(agui::run::<S>),
        (method, path) => unreachable!("no handler for {method} {path}"),
    }
}

/// Registers every route of [`ROUTES`] for backend `S`, then the page.
pub fn configure<S: Store>(cfg: &mut web::ServiceConfig, page: Page) {
    cfg.app_data(
        web::QueryConfig::default().error_handler(|error, _| {
            ApiError::BadRequest(format!("invalid query: {error}")).into()
        }),
    )
    .app_data(
        web::PathConfig::default().error_handler(|error, _| {
            ApiError::BadRequest(format!("invalid path: {error}")).into()
        }),
    );
    // One resource per path with all its methods; any other method answers 405.
    let mut paths: Vec<&str> = ROUTES.iter().map(|info| info.path).collect();
    paths.dedup();
    for path in paths {
        let methods: Vec<&RouteInfo> = ROUTES.iter().filter(|info| info.path == path).collect();
        let allowed: String = methods
            .iter()
            .map(|info| info.method)
            .collect::<Vec<_>>()
            .join(", ");
        let refuse = move || {
            let allowed = allowed.clone();
            async move { Err::<actix_web::HttpResponse, _>(ApiError::MethodNotAllowed(allowed)) }
        };
        let mut resource = web::resource(path).default_service(web::to(refuse));
        for info in methods {
            resource = resource.route(query::taking_only(handler::<S>(info), info.query));
        }
        cfg.service(resource);
    }
    cfg.service(web::scope("/api").default_service(web::to(health::api_not_found)));
    page.configure(cfg);
}
