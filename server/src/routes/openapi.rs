//! `GET /api/openapi.json`: the OpenAPI 3.1 document of the REST API, generated with
//! `utoipa` from the handlers' annotations and the shared body types, so it cannot
//! drift from the code (a test checks it lists every route of [`super::ROUTES`]).

use std::collections::btree_map::Entry;

use actix_web::HttpResponse;
use shared::api::{
    BranchList, BranchStarted, ContinueRun, CreateSession, CurrentUser, EditMessage, ErrorBody,
    ErrorDetail, EventPage, ForkSession, LoggedEvent, LoginBody, McpServerInfo, ModelList,
    PostMessage, Regenerate, ResumeBody, RunAccepted, ServerInfo, SessionDetail, SessionList,
    SessionListEvent, SessionStatus, SessionSummary,
};
use shared::attachments::Attachment;
use shared::feedback::{FeedbackEvent, FeedbackList, GiveFeedback, ListedFeedback, Rating};
use shared::instructions::Instructions;
use shared::queue::{QueuedList, QueuedMessage, WhileRunning};
use shared::sharing::{CreateShare, CreatedShare, RenameSession, Share, ShareList, SharedSession};
use shared::state::{PatchOperation, StateBody};
use shared::usage::{SessionUsage, UsageTotals};
use shared::{Interrupt, ResumeStatus};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Response, ResponseBuilder};
use utoipa::{Modify, OpenApi};

use super::{auth, health, runs, sessions};

/// The document.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Tandem",
        description = "A person and an LLM agent, working in tandem: sessions, runs, answers \
                       to the agent's questions, and the session's event log (AG-UI 1.0 \
                       events). Live events stream over the WebSocket at \
                       `/api/sessions/{id}/ws` (see docs/protocol.md). Every error is \
                       `{\"error\":{\"code\",\"message\",\"details\"?}}`. Requests from a \
                       browser page of another origin that change anything are refused \
                       with 403, requests for another host name with 421."
    ),
    paths(
        health::healthz,
        health::readyz,
        super::metrics::metrics,
        document,
        auth::login,
        auth::logout,
        auth::me,
        health::info,
        health::models,
        sessions::create,
        sessions::list,
        sessions::stream,
        sessions::get,
        sessions::rename,
        sessions::delete,
        super::branches::fork,
        super::branches::list,
        super::branches::edit,
        super::branches::regenerate,
        sessions::events,
        super::export::export,
        super::export::preview,
        super::webhooks::deliveries,
        super::shares::create,
        super::shares::list,
        super::shares::delete,
        super::shares::shared,
        runs::post_message,
        runs::continue_run,
        runs::answer,
        runs::cancel,
        super::queue::list,
        super::queue::edit,
        super::queue::withdraw,
        super::state::get,
        super::state::patch,
        super::instructions::get_own,
        super::instructions::put_own,
        super::instructions::get_session,
        super::instructions::put_session,
        super::feedback::give,
        super::feedback::list,
        super::usage::usage,
        super::attachments::upload,
        super::attachments::download,
        super::attachments::shared_download,
        super::agui::run,
        crate::ws::connect,
        crate::ws::connect_shared,
    ),
    components(schemas(
        BranchList, BranchStarted, CreateSession, CurrentUser, EditMessage, ErrorBody, ErrorDetail, EventPage, ForkSession, LoggedEvent, LoginBody, Regenerate, ContinueRun,
        PostMessage, ResumeBody, ResumeStatus, RunAccepted, ServerInfo, McpServerInfo, ModelList, SessionDetail,
        SessionList, SessionListEvent, SessionStatus, SessionSummary, Interrupt, RenameSession, CreateShare,
        CreatedShare, Share, ShareList, SharedSession, QueuedList, QueuedMessage, WhileRunning,
        SessionUsage, UsageTotals, Attachment, StateBody, PatchOperation, GiveFeedback,
        FeedbackEvent, FeedbackList, ListedFeedback, Rating, Instructions
    )),
    modifiers(&Security, &QueryRefusals, &BodyTimeouts),
    security(("bearer" = []), ("cookie" = [])),
    tags(
        (name = "auth", description = "Signing in and who the caller is"),
        (name = "sessions", description = "Sessions and their event logs"),
        (name = "runs", description = "Messages, answers and stops: what starts and ends runs"),
        (name = "agui", description = "AG-UI's HTTP transport: a `RunAgentInput` in, the run's events out as Server-Sent Events"),
        (name = "sharing", description = "Read-only share links of a session, and reading through one"),
        (name = "instructions", description = "What the person tells the model: their own instructions, for all their conversations, and each conversation's"),
        (name = "server", description = "Health and facts about this server"),
    )
)]
pub struct ApiDoc;

/// Adds the two ways to authenticate.
struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An API token from `tandem users add NAME` (`tdm_…`). Not needed \
                         when the server runs with `--auth none`.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "cookie",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                crate::auth::sign_in::COOKIE_NAME,
                "The page's sign-in cookie from `POST /api/auth/login`.",
            ))),
        );
    }
}

/// Says on every operation that it may answer 400: a query parameter it does not take is
/// refused ([`super::query`]), whatever the operation's own annotation lists.
struct QueryRefusals;

impl Modify for QueryRefusals {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in operations.into_iter().flatten() {
                match operation.responses.responses.entry("400".to_string()) {
                    Entry::Occupied(mut listed) => {
                        if let RefOr::T(response) = listed.get_mut() {
                            response
                                .description
                                .push_str("; or a query parameter it does not take");
                        }
                    }
                    Entry::Vacant(missing) => {
                        missing.insert(RefOr::T(query_refusal()));
                    }
                }
            }
        }
    }
}

/// The 400 of an operation whose annotation lists none.
fn query_refusal() -> Response {
    error_response("A query parameter this endpoint does not take")
}

/// Says on every operation that takes a body that it may answer 408: a body that stops
/// arriving is cut by the edge (`crate::edge`), whatever the operation.
struct BodyTimeouts;

impl Modify for BodyTimeouts {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let operations = [&mut item.put, &mut item.post, &mut item.patch];
            for operation in operations.into_iter().flatten() {
                if operation.request_body.is_some() {
                    let timeout = error_response(
                        "`request_timeout`: the body stopped arriving (less than 1 KiB in \
                         `--body-timeout-ms`); the connection is closed",
                    );
                    let responses = &mut operation.responses.responses;
                    responses.insert("408".to_string(), RefOr::T(timeout));
                }
            }
        }
    }
}

/// A response of `description` with the error body.
fn error_response(description: &str) -> Response {
    let error_body = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name("ErrorBody")))
        .build();
    ResponseBuilder::new()
        .description(description)
        .content("application/json", error_body)
        .build()
}

/// `GET /api/openapi.json`.
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    tag = "server",
    security(()),
    responses((status = 200, description = "This document", content_type = "application/json"))
)]
pub async fn document() -> HttpResponse {
    let json = ApiDoc::openapi()
        .to_json()
        .expect("the OpenAPI document serialises");
    HttpResponse::Ok()
        .content_type("application/json")
        .body(json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_documented() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        for route in super::super::ROUTES {
            let method = route.method.to_ascii_lowercase();
            assert!(
                doc["paths"][route.path][&method].is_object(),
                "{} {} is missing from /api/openapi.json",
                route.method,
                route.path
            );
        }
        assert_eq!(doc["openapi"], "3.1.0");
    }

    #[test]
    fn every_route_documents_the_query_it_takes_and_the_refusal_of_others() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        for route in super::super::ROUTES {
            let operation = &doc["paths"][route.path][route.method.to_ascii_lowercase()];
            let mut documented: Vec<&str> = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "query")
                .filter_map(|p| p["name"].as_str())
                .collect();
            documented.sort_unstable();
            let mut taken = route.query.to_vec();
            taken.sort_unstable();
            let what = format!("{} {}", route.method, route.path);
            assert_eq!(
                documented, taken,
                "{what}: the table and the document disagree"
            );
            assert!(operation["responses"]["400"].is_object(), "{what}: no 400");
        }
    }

    #[test]
    fn every_operation_that_takes_a_body_documents_its_timeout() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let mut with_bodies = 0;
        for route in super::super::ROUTES {
            let operation = &doc["paths"][route.path][route.method.to_ascii_lowercase()];
            if operation["requestBody"].is_object() {
                with_bodies += 1;
                let what = format!("{} {}", route.method, route.path);
                assert!(operation["responses"]["408"].is_object(), "{what}: no 408");
            }
        }
        assert!(with_bodies > 10, "{with_bodies} operations take a body");
    }
}
