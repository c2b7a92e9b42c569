//! REST routes under `/api`, `/healthz`, `/readyz`, and the built page.
//!
//! [`table`] is the one list of every endpoint: its method and path, who may call it, the
//! query parameters it takes (any other is refused, [`query`]), what it spends of the
//! caller's allowances ([`Spend`]: its 429 and 503), its handler and its `#[utoipa::path]`
//! annotation. `configure` registers exactly its entries, the OpenAPI
//! document is built from them ([`openapi`]: each annotation says what is its own, the
//! entry implies the rest), and the test suite generates its auth and isolation checks
//! from them, so a route cannot be added without them. Handlers parse and validate
//! input, call the runner or the store, and render JSON; a handler of an
//! [`Access::User`] route takes a [`Caller`](crate::auth::Caller) and reaches sessions
//! only through [`crate::access::owned_session`]: one of a route naming a session takes
//! [`Owned`], which calls it before the handler runs.

mod agui;
mod attachments;
mod auth;
mod body;
mod branches;
mod endpoint;
mod export;
mod feedback;
mod health;
mod instructions;
mod metrics;
pub mod openapi;
mod owned;
mod page;
mod query;
mod queue;
mod replays;
mod runs;
mod schedules;
mod sessions;
mod shares;
mod state;
mod tools;
mod usage;
mod webhooks;

use actix_web::web;

use crate::error::ApiError;
use crate::store::Store;
use crate::ws;
use endpoint::{route, DELETE, GET, PATCH, POST, PUT};

pub use body::{parse_json, JsonBody};
pub use endpoint::{Access, Endpoint, Spend, Verb};
pub use owned::Owned;
pub use page::Page;

/// Every endpoint Tandem serves besides the page's files, with its handler for backend
/// `S` (the rest of an entry is the same for every backend).
pub fn table<S: Store>() -> Vec<Endpoint> {
    use Access::{Public, Shared, User};
    use Spend::{InputBytes, Messages, RunQueue, Sessions, ShareLinks, ToolUploads};
    vec![
        route(GET, "/healthz", Public)
            .to(health::healthz, health::__path_healthz)
            .without_storage(),
        route(GET, "/readyz", Public).to(health::readyz::<S>, health::__path_readyz),
        route(GET, "/metrics", Public).to(metrics::metrics::<S>, metrics::__path_metrics),
        route(GET, "/api/openapi.json", Public)
            .to(openapi::document::<S>, openapi::__path_document)
            .without_storage(),
        route(POST, "/api/auth/login", Public).to(auth::login::<S>, auth::__path_login),
        route(POST, "/api/auth/logout", Public).to(auth::logout::<S>, auth::__path_logout),
        route(GET, "/api/auth/me", User).to(auth::me::<S>, auth::__path_me),
        route(GET, "/api/info", User).to(health::info::<S>, health::__path_info),
        route(GET, "/api/models", User).to(health::models::<S>, health::__path_models),
        route(POST, "/api/sessions", User)
            .to(sessions::create::<S>, sessions::__path_create)
            .spending(&[Sessions]),
        route(GET, "/api/sessions", User)
            .to(sessions::list::<S>, sessions::__path_list)
            .taking(&["q"]),
        route(GET, "/api/sessions/stream", User).to(sessions::stream::<S>, sessions::__path_stream),
        route(GET, "/api/sessions/{id}", User).to(sessions::get::<S>, sessions::__path_get),
        route(PATCH, "/api/sessions/{id}", User).to(sessions::rename::<S>, sessions::__path_rename),
        route(DELETE, "/api/sessions/{id}", User)
            .to(sessions::delete::<S>, sessions::__path_delete),
        route(POST, "/api/sessions/{id}/fork", User)
            .to(branches::fork::<S>, branches::__path_fork)
            .spending(&[Sessions]),
        route(GET, "/api/sessions/{id}/branches", User)
            .to(branches::list::<S>, branches::__path_list),
        route(GET, "/api/sessions/{id}/events", User)
            .to(sessions::events::<S>, sessions::__path_events)
            .taking(&["after", "limit"]),
        route(GET, "/api/sessions/{id}/export", User)
            .to(export::export::<S>, export::__path_export)
            .taking(&["format"]),
        route(GET, "/api/sessions/{id}/preview", User)
            .to(export::preview::<S>, export::__path_preview),
        route(GET, "/api/sessions/{id}/webhooks", User)
            .to(webhooks::deliveries::<S>, webhooks::__path_deliveries),
        route(POST, "/api/sessions/{id}/shares", User)
            .to(shares::create::<S>, shares::__path_create)
            .spending(&[ShareLinks]),
        route(GET, "/api/sessions/{id}/shares", User).to(shares::list::<S>, shares::__path_list),
        route(DELETE, "/api/sessions/{id}/shares/{share}", User)
            .to(shares::delete::<S>, shares::__path_delete),
        route(POST, "/api/sessions/{id}/messages", User)
            .to(runs::post_message::<S>, runs::__path_post_message)
            .spending(&[Messages, RunQueue]),
        route(POST, "/api/sessions/{id}/messages/{message}/edit", User)
            .to(branches::edit::<S>, branches::__path_edit)
            .spending(&[Sessions, Messages, RunQueue]),
        route(POST, "/api/sessions/{id}/runs/{run}/regenerate", User)
            .to(branches::regenerate::<S>, branches::__path_regenerate)
            .spending(&[Sessions, Messages, RunQueue]),
        route(POST, "/api/sessions/{id}/runs/{run}/continue", User)
            .to(runs::continue_run::<S>, runs::__path_continue_run)
            .spending(&[Messages, RunQueue]),
        route(POST, "/api/sessions/{id}/runs/{run}/feedback", User)
            .to(feedback::give::<S>, feedback::__path_give),
        route(GET, "/api/feedback", User)
            .to(feedback::list::<S>, feedback::__path_list)
            .taking(&["since", "rating", "limit"]),
        route(POST, "/api/sessions/{id}/interrupts/{interrupt}", User)
            .to(runs::answer::<S>, runs::__path_answer)
            .spending(&[RunQueue]),
        route(POST, "/api/sessions/{id}/cancel", User).to(runs::cancel::<S>, runs::__path_cancel),
        route(GET, "/api/sessions/{id}/queue", User).to(queue::list::<S>, queue::__path_list),
        route(GET, "/api/sessions/{id}/state", User).to(state::get::<S>, state::__path_get),
        route(GET, "/api/instructions", User)
            .to(instructions::get_own::<S>, instructions::__path_get_own),
        route(PUT, "/api/instructions", User)
            .to(instructions::put_own::<S>, instructions::__path_put_own),
        route(GET, "/api/tools", User).to(tools::list::<S>, tools::__path_list),
        route(PUT, "/api/tools/{name}", User)
            .to(tools::put::<S>, tools::__path_put)
            .spending(&[ToolUploads]),
        route(DELETE, "/api/tools/{name}", User).to(tools::delete::<S>, tools::__path_delete),
        route(POST, "/api/schedules", User).to(schedules::create::<S>, schedules::__path_create),
        route(GET, "/api/schedules", User).to(schedules::list::<S>, schedules::__path_list),
        route(GET, "/api/schedules/preview", User)
            .to(schedules::preview::<S>, schedules::__path_preview)
            .taking(&["cron", "timezone", "from", "count"]),
        route(GET, "/api/schedules/{schedule}", User)
            .to(schedules::get::<S>, schedules::__path_get),
        route(PATCH, "/api/schedules/{schedule}", User)
            .to(schedules::patch::<S>, schedules::__path_patch),
        route(DELETE, "/api/schedules/{schedule}", User)
            .to(schedules::delete::<S>, schedules::__path_delete),
        route(POST, "/api/schedules/{schedule}/run", User)
            .to(schedules::run_now::<S>, schedules::__path_run_now)
            .spending(&[Messages]),
        route(POST, "/api/sessions/{id}/replays", User)
            .to(replays::create::<S>, replays::__path_create)
            .spending(&[Sessions, Messages]),
        route(GET, "/api/sessions/{id}/replays", User).to(replays::list::<S>, replays::__path_list),
        route(GET, "/api/replays/{replay}", User).to(replays::get::<S>, replays::__path_get),
        route(DELETE, "/api/replays/{replay}", User)
            .to(replays::cancel::<S>, replays::__path_cancel),
        route(POST, "/api/evals", User)
            .to(replays::create_eval::<S>, replays::__path_create_eval)
            .spending(&[Sessions, Messages]),
        route(GET, "/api/evals", User).to(replays::list_evals::<S>, replays::__path_list_evals),
        route(GET, "/api/evals/{eval}", User).to(replays::get_eval::<S>, replays::__path_get_eval),
        route(DELETE, "/api/evals/{eval}", User)
            .to(replays::cancel_eval::<S>, replays::__path_cancel_eval),
        route(GET, "/api/schedules/{schedule}/fires", User)
            .to(schedules::fires::<S>, schedules::__path_fires)
            .taking(&["limit"]),
        route(GET, "/api/sessions/{id}/instructions", User).to(
            instructions::get_session::<S>,
            instructions::__path_get_session,
        ),
        route(PUT, "/api/sessions/{id}/instructions", User).to(
            instructions::put_session::<S>,
            instructions::__path_put_session,
        ),
        route(PATCH, "/api/sessions/{id}/state", User).to(state::patch::<S>, state::__path_patch),
        route(GET, "/api/sessions/{id}/usage", User).to(usage::usage::<S>, usage::__path_usage),
        route(POST, "/api/sessions/{id}/attachments", User)
            .to(attachments::upload::<S>, attachments::__path_upload)
            .taking(&["name"]),
        route(GET, "/api/attachments/{attachment}", User)
            .to(attachments::download::<S>, attachments::__path_download),
        route(PATCH, "/api/sessions/{id}/queue/{queued}", User)
            .to(queue::edit::<S>, queue::__path_edit),
        route(DELETE, "/api/sessions/{id}/queue/{queued}", User)
            .to(queue::withdraw::<S>, queue::__path_withdraw),
        route(GET, "/api/sessions/{id}/ws", User)
            .to(ws::connect::<S>, ws::__path_connect)
            .taking(&["after"]),
        route(POST, "/api/agui", User)
            .to(agui::run::<S>, agui::__path_run)
            .spending(&[Messages, Sessions, InputBytes, RunQueue]),
        route(GET, "/api/shared/{token}", Shared).to(shares::shared::<S>, shares::__path_shared),
        route(GET, "/api/shared/{token}/ws", Shared)
            .to(ws::connect_shared::<S>, ws::__path_connect_shared)
            .taking(&["after"]),
        route(GET, "/api/shared/{token}/attachments/{attachment}", Shared).to(
            attachments::shared_download::<S>,
            attachments::__path_shared_download,
        ),
    ]
}

/// Registers every route of [`table`] for backend `S`, then the page.
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
    let mut resources: Vec<(&str, Vec<Endpoint>)> = Vec::new();
    for endpoint in table::<S>() {
        match resources
            .iter_mut()
            .find(|(path, _)| *path == endpoint.path)
        {
            Some((_, methods)) => methods.push(endpoint),
            None => resources.push((endpoint.path, vec![endpoint])),
        }
    }
    for (path, methods) in resources {
        let allowed: String = methods
            .iter()
            .map(|endpoint| endpoint.method)
            .collect::<Vec<_>>()
            .join(", ");
        let refuse = move || {
            let allowed = allowed.clone();
            async move { Err::<actix_web::HttpResponse, _>(ApiError::MethodNotAllowed(allowed)) }
        };
        let mut resource = web::resource(path).default_service(web::to(refuse));
        for endpoint in methods {
            resource = resource.route(endpoint.into_route());
        }
        cfg.service(resource);
    }
    cfg.service(web::scope("/api").default_service(web::to(health::api_not_found)));
    page.configure(cfg);
}
