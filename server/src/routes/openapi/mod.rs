//! `GET /api/openapi.json`: the OpenAPI 3.1 document of the REST API, generated with
//! `utoipa` from the route table ([`super::table`]) and the shared body types, so it
//! cannot drift from the code: an operation for every entry, at the entry's path, made of
//! its handler's annotation ([`annotation`]) and what the entry implies ([`common`]).

mod annotation;
mod common;

use actix_web::HttpResponse;
use shared::api::{
    BranchList, BranchStarted, ContinueRun, CreateSession, CurrentUser, EditMessage, ErrorBody,
    ErrorDetail, EventPage, ForkSession, LoggedEvent, LoginBody, McpServerInfo, ModelList,
    PostMessage, Regenerate, ResumeBody, RunAccepted, ServerInfo, SessionDetail, SessionList,
    SessionListEvent, SessionStatus, SessionSummary,
};
use shared::attachments::Attachment;
use shared::evals::{
    Eval, EvalCell, EvalConversation, EvalFilter, EvalInput, EvalList, EvalVariant,
};
use shared::feedback::{FeedbackEvent, FeedbackList, GiveFeedback, ListedFeedback, Rating};
use shared::instructions::Instructions;
use shared::queue::{QueuedList, QueuedMessage, WhileRunning};
use shared::replays::{
    AnswersMode, Expect, Judge, Replay, ReplayInput, ReplayList, ReplayStatus, ToolsMode, Trial,
    TrialStatus, TrialUsage, Variant, VariantResult, Verdict,
};
use shared::schedules::{
    Fire, FireList, FireStatus, Misfire, Overlap, Schedule, ScheduleInput, ScheduleList,
    SchedulePreview, ScheduledMessage,
};
use shared::sharing::{CreateShare, CreatedShare, RenameSession, Share, ShareList, SharedSession};
use shared::state::{PatchOperation, StateBody};
use shared::tools::{ToolInfo, ToolList, ToolSource};
use shared::usage::{SessionUsage, UsageTotals};
use shared::{Interrupt, ResumeStatus};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::store::Store;

pub use annotation::{Annotated, Annotation};

/// The document but its paths: what it says of the API, its schemas, how to
/// authenticate, its tags.
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
    components(schemas(
        BranchList, BranchStarted, CreateSession, CurrentUser, EditMessage, ErrorBody, ErrorDetail, EventPage, ForkSession, LoggedEvent, LoginBody, Regenerate, ContinueRun,
        PostMessage, ResumeBody, ResumeStatus, RunAccepted, ServerInfo, McpServerInfo, ModelList, SessionDetail,
        SessionList, SessionListEvent, SessionStatus, SessionSummary, Interrupt, RenameSession, CreateShare,
        CreatedShare, Share, ShareList, SharedSession, QueuedList, QueuedMessage, WhileRunning,
        SessionUsage, UsageTotals, Attachment, StateBody, PatchOperation, GiveFeedback,
        FeedbackEvent, FeedbackList, ListedFeedback, Rating, Instructions,
        ToolList, ToolInfo, ToolSource, Schedule, ScheduleInput, ScheduledMessage, ScheduleList,
        Fire, FireList, FireStatus, SchedulePreview, Misfire, Overlap, ReplayInput, Variant,
        Expect, Judge, ToolsMode, AnswersMode, Replay, ReplayList, ReplayStatus, VariantResult,
        Trial, TrialStatus, TrialUsage, Verdict, EvalInput, EvalFilter, Eval, EvalList, EvalVariant,
        EvalCell, EvalConversation
    )),
    modifiers(&Security),
    security(("bearer" = []), ("cookie" = [])),
    tags(
        (name = "auth", description = "Signing in and who the caller is"),
        (name = "sessions", description = "Sessions and their event logs"),
        (name = "runs", description = "Messages, answers and stops: what starts and ends runs"),
        (name = "agui", description = "AG-UI's HTTP transport: a `RunAgentInput` in, the run's events out as Server-Sent Events"),
        (name = "sharing", description = "Read-only share links of a session, and reading through one"),
        (name = "tools", description = "What the person's model may call, and the person's own WebAssembly tools"),
        (name = "schedules", description = "Runs nobody starts by hand: schedules (cron in a time zone, one instant, an interval), each scheduled time fired once, and what became of each"),
        (name = "replays", description = "A conversation's recorded run sent again on other models, prompts or temperatures, k times each, its tool results and answers served from the record (nothing with a side effect runs again), each trial scored: pass@1 and pass^k; evals do it over many conversations at once"),
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

/// The document: [`ApiDoc`] with an operation for every entry of the route table.
pub fn build<S: Store>() -> utoipa::openapi::OpenApi {
    let mut document = ApiDoc::openapi();
    let mut schemas = Vec::new();
    for endpoint in super::table::<S>() {
        let annotation = endpoint.annotation;
        let operation = common::complete(&endpoint, annotation.operation());
        let methods = vec![endpoint.operation.clone()];
        document
            .paths
            .add_path_operation(endpoint.path, methods, operation);
        annotation.schemas(&mut schemas);
    }
    let components = document.components.get_or_insert_with(Default::default);
    components.schemas.extend(schemas);
    document
}

/// `GET /api/openapi.json`.
#[utoipa::path(get, path = "/api/openapi.json", tag = "server", responses(
    (status = 200, description = "This document", content_type = "application/json"),
))]
pub async fn document<S: Store>() -> HttpResponse {
    let json = build::<S>()
        .to_json()
        .expect("the OpenAPI document serialises");
    HttpResponse::Ok()
        .content_type("application/json")
        .body(json)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::routes::{table, Access};
    use crate::store::SqliteStore;

    /// The document as served (the backend changes only the handlers).
    fn served() -> Value {
        serde_json::to_value(build::<SqliteStore>()).unwrap()
    }

    #[test]
    fn every_route_is_documented() {
        let doc = served();
        for route in table::<SqliteStore>() {
            let what = format!("{} {}", route.method, route.path);
            let annotation = route.annotation;
            assert_eq!(
                annotation.path(),
                route.path,
                "{what}: its annotation's path"
            );
            assert!(
                annotation.methods() == vec![route.operation.clone()],
                "{what}: its annotation's method"
            );
            let method = route.method.to_ascii_lowercase();
            let operation = &doc["paths"][route.path][&method];
            assert!(
                operation["responses"].is_object(),
                "{what} is not documented"
            );
            assert!(operation["tags"][0].is_string(), "{what} has no tag");
        }
        let operations: usize = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .map(|item| item.as_object().unwrap().len())
            .sum();
        assert_eq!(operations, table::<SqliteStore>().len());
        assert_eq!(doc["openapi"], "3.1.0");
    }

    #[test]
    fn every_route_documents_the_query_it_takes_and_the_refusal_of_others() {
        let doc = served();
        for route in table::<SqliteStore>() {
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
    fn every_path_parameter_is_described_in_the_order_of_the_path() {
        let doc = served();
        for route in table::<SqliteStore>() {
            let operation = &doc["paths"][route.path][route.method.to_ascii_lowercase()];
            let described: Vec<&str> = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path" && p["description"].is_string())
                .filter_map(|p| p["name"].as_str())
                .collect();
            let named: Vec<&str> = route
                .path
                .split('/')
                .filter_map(|part| part.strip_prefix('{')?.strip_suffix('}'))
                .collect();
            assert_eq!(described, named, "{} {}", route.method, route.path);
        }
    }

    #[test]
    fn only_user_routes_ask_for_credentials() {
        let doc = served();
        for route in table::<SqliteStore>() {
            let operation = &doc["paths"][route.path][route.method.to_ascii_lowercase()];
            let what = format!("{} {}", route.method, route.path);
            let user = route.access == Access::User;
            let unauthorized = &operation["responses"]["401"]["description"];
            assert_eq!(
                unauthorized == "No valid credentials",
                user,
                "{what}: {unauthorized}"
            );
            // No requirement of its own: the document's (a bearer token or the cookie).
            assert_eq!(operation["security"].is_null(), user, "{what}");
        }
    }

    #[test]
    fn a_response_an_annotation_lists_stands_instead_of_the_common_one() {
        let doc = served();
        let responses = |method: &str, path: &str| doc["paths"][path][method]["responses"].clone();
        let own = responses("post", "/api/sessions/{id}/messages");
        let common = responses("get", "/api/sessions/{id}");
        assert!(own["503"]["description"]
            .as_str()
            .unwrap()
            .starts_with("`saturated`"));
        assert_eq!(common["503"]["description"], "Storage unavailable");
        assert_eq!(own["404"]["description"], common["404"]["description"]);
        let queued = responses("delete", "/api/sessions/{id}/queue/{queued}");
        assert_eq!(
            queued["404"]["description"],
            "No such session of the caller's, or no such queued message"
        );
        // A user's route checks its caller in the store under `--auth token`, whatever its
        // handler reads; a public one that reads nothing says no 503.
        assert_eq!(
            responses("get", "/api/info")["503"]["description"],
            "Storage unavailable"
        );
        assert!(responses("get", "/healthz")["503"].is_null());
    }

    #[test]
    fn every_operation_that_takes_a_body_documents_its_timeout() {
        let doc = served();
        let mut with_bodies = 0;
        for route in table::<SqliteStore>() {
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
