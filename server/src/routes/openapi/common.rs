//! What the document says of an operation because of its table entry or its kind, not
//! because of its annotation: declared here once, added to every operation it applies to.
//!
//! An annotation keeps what is its own: a response it lists (or a path parameter it
//! describes) stands instead of the common one of that status (or name). It must not
//! decide who may call the route: that is the table's [`Access`].

use std::collections::btree_map::Entry;

use utoipa::openapi::path::{Operation, Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Required, Response, ResponseBuilder};

use crate::routes::{Access, Endpoint, Spend};

/// An error response many operations share: its status, what it says, and whether it
/// applies to an operation (from its table entry and its annotation).
type Common = (
    &'static str,
    &'static str,
    fn(&Endpoint, &Operation) -> bool,
);

/// The shared error responses; for each status the first that applies counts.
const COMMON: &[Common] = &[
    (
        "400",
        "Not a WebSocket request, a bad id or query",
        |e, o| upgrades(o) && e.names_session(),
    ),
    ("400", "Not a WebSocket request, or a bad query", |_, o| {
        upgrades(o)
    }),
    ("400", "Malformed body or id", |e, o| {
        e.names_session() && takes_json(o)
    }),
    ("400", "Not a session id", |e, _| e.names_session()),
    ("400", "Malformed body", |_, o| takes_json(o)),
    (
        "400",
        "Not a `multipart/form-data` body, or one without the parts it needs",
        |_, o| takes_form(o),
    ),
    ("403", "A browser page of another origin", |_, o| {
        upgrades(o)
    }),
    ("401", "No valid credentials", |e, _| {
        e.access == Access::User
    }),
    ("404", "No such session of the caller's", |e, _| {
        e.names_session()
    }),
    ("406", "`Accept` excludes `text/event-stream`", |_, o| {
        streams_events(o)
    }),
    ("413", "Body too large", |_, o| takes_json(o)),
    (
        "415",
        "A body that is not JSON (`application/json` or `application/…+json`)",
        |_, o| takes_json(o),
    ),
    (
        "503",
        "`saturated` (too many runs waiting) or storage unavailable",
        |e, _| e.spends.contains(&Spend::RunQueue),
    ),
    ("503", "Storage unavailable", |e, _| e.storage),
];

/// Path parameters many routes name, described once by their name: the name, what it
/// is, and whether it is a UUID.
const PATH_PARAMETERS: &[(&str, &str, bool)] = &[
    ("id", "The session id (a UUID)", true),
    ("token", "The link's secret (`tds_…`)", false),
    ("attachment", "The attachment's id", false),
    ("queued", "The queued message's id", false),
    ("share", "The link's id", false),
    ("interrupt", "The interrupt id from `RUN_FINISHED`", false),
    ("run", "A run of the session (`RUN_STARTED.runId`)", false),
    (
        "name",
        "A tool's name: a lower-case letter, then up to 63 lower-case letters, digits or \
         single underscores",
        false,
    ),
    (
        "message",
        "The id of one of the person's messages (`TEXT_MESSAGE_START.messageId`, role `user`)",
        false,
    ),
];

/// `operation`, an annotation's, with what `endpoint`'s entry and its kind imply: no
/// credentials needed unless it is a user's route, its path parameters, the shared
/// error responses, the refusal of a query parameter it does not take (400) and the
/// timeout of a body that stops arriving (408).
pub fn complete(endpoint: &Endpoint, mut operation: Operation) -> Operation {
    if endpoint.access != Access::User {
        operation.security = Some(vec![SecurityRequirement::default()]);
    }
    operation.parameters = parameters(endpoint.path, operation.parameters.take());
    let mut common: Vec<(&str, &str)> = Vec::new();
    for (status, description, applies) in COMMON {
        let listed = common.iter().any(|(listed, _)| listed == status);
        if !listed && applies(endpoint, &operation) {
            common.push((status, description));
        }
    }
    let responses = &mut operation.responses.responses;
    for (status, description) in common {
        if let Entry::Vacant(missing) = responses.entry(status.to_string()) {
            missing.insert(RefOr::T(error_response(description)));
        }
    }
    spend_allowances(endpoint, &mut operation);
    refuse_queries(&mut operation);
    time_out_bodies(&mut operation);
    serve_ranges(&mut operation);
    operation
}

/// The path parameters of `path` in its order, each as its annotation describes it or
/// else as [`PATH_PARAMETERS`] does, then the annotation's others (its query).
fn parameters(path: &str, own: Option<Vec<Parameter>>) -> Option<Vec<Parameter>> {
    let (mut in_path, others): (Vec<Parameter>, Vec<Parameter>) = own
        .unwrap_or_default()
        .into_iter()
        .partition(|parameter| parameter.parameter_in == ParameterIn::Path);
    let mut all = Vec::new();
    for name in path_names(path) {
        match in_path.iter().position(|parameter| parameter.name == name) {
            Some(own) => all.push(in_path.remove(own)),
            None => all.extend(path_parameter(name)),
        }
    }
    all.extend(in_path);
    all.extend(others);
    (!all.is_empty()).then_some(all)
}

/// The `{name}`s of a path pattern, in order.
fn path_names(path: &str) -> impl Iterator<Item = &str> {
    path.split('/')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
}

/// The path parameter `name` as [`PATH_PARAMETERS`] describes it, if it does.
fn path_parameter(name: &str) -> Option<Parameter> {
    let (name, description, uuid) = PATH_PARAMETERS.iter().find(|(known, ..)| *known == name)?;
    let mut schema = ObjectBuilder::new().schema_type(Type::String);
    if *uuid {
        schema = schema.format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)));
    }
    let parameter = ParameterBuilder::new()
        .name(*name)
        .parameter_in(ParameterIn::Path)
        .description(Some(*description))
        .required(Required::True)
        .schema(Some(schema))
        .build();
    Some(parameter)
}

/// Whether it takes a JSON body (`application/json` or `application/…+json`), read
/// through [`crate::routes::JsonBody`].
fn takes_json(operation: &Operation) -> bool {
    operation.request_body.as_ref().is_some_and(|body| {
        body.content
            .keys()
            .any(|media| media == "application/json" || media.ends_with("+json"))
    })
}

/// Whether it takes a `multipart/form-data` body only.
fn takes_form(operation: &Operation) -> bool {
    operation.request_body.as_ref().is_some_and(|body| {
        body.content.len() == 1 && body.content.contains_key("multipart/form-data")
    })
}

/// Whether it upgrades to a WebSocket (answers 101).
fn upgrades(operation: &Operation) -> bool {
    operation.responses.responses.contains_key("101")
}

/// Whether it answers with Server-Sent Events.
fn streams_events(operation: &Operation) -> bool {
    operation
        .responses
        .responses
        .values()
        .any(|response| match response {
            RefOr::T(response) => response.content.contains_key("text/event-stream"),
            RefOr::Ref(_) => false,
        })
}

/// Says that it may answer 429 for each allowance the route spends, unless its
/// annotation says so itself (a route that queues a run gets its 503 from [`COMMON`]).
fn spend_allowances(endpoint: &Endpoint, operation: &mut Operation) {
    if endpoint.spends.is_empty() {
        return;
    }
    let per_minute: Vec<&str> = endpoint
        .spends
        .iter()
        .filter_map(|spend| match spend {
            Spend::Sessions => Some("new sessions"),
            Spend::Messages => Some("messages"),
            Spend::ShareLinks => Some("share links"),
            Spend::ToolUploads => Some("tool uploads"),
            Spend::InputBytes => Some("bytes of input"),
            Spend::RunQueue => None,
        })
        .collect();
    let mut refusals = Vec::new();
    if !per_minute.is_empty() {
        refusals.push(format!(
            "`rate_limited` (too many {} this minute)",
            or_list(&per_minute)
        ));
    }
    if endpoint.spends.contains(&Spend::RunQueue) {
        refusals.push(
            "`too_many_queued_runs` (the caller's share of the run queue is full)".to_string(),
        );
    }
    let limited = format!("{}; `Retry-After`", refusals.join(" or "));
    if let Entry::Vacant(missing) = operation.responses.responses.entry("429".to_string()) {
        missing.insert(RefOr::T(error_response(&limited)));
    }
}

/// "a", "a or b", "a, b or c".
fn or_list(items: &[&str]) -> String {
    match items.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Says that it may answer 400 because a query parameter it does not take is refused
/// ([`crate::routes::query`]), whatever else its 400 says.
fn refuse_queries(operation: &mut Operation) {
    match operation.responses.responses.entry("400".to_string()) {
        Entry::Occupied(mut listed) => {
            if let RefOr::T(response) = listed.get_mut() {
                response
                    .description
                    .push_str("; or a query parameter it does not take");
            }
        }
        Entry::Vacant(missing) => {
            let refusal = error_response("A query parameter this endpoint does not take");
            missing.insert(RefOr::T(refusal));
        }
    }
}

/// Says that it may answer 408 if it takes a body: one that stops arriving is cut by the
/// edge (`crate::edge`), whatever the operation.
fn time_out_bodies(operation: &mut Operation) {
    if operation.request_body.is_some() {
        let timeout = error_response(
            "`request_timeout`: the body stopped arriving (less than 1 KiB in \
             `--body-timeout-ms`); the connection is closed",
        );
        let responses = &mut operation.responses.responses;
        responses.insert("408".to_string(), RefOr::T(timeout));
    }
}

/// Says what a route that serves a file's bytes answers besides them: one range of
/// them, "not modified", and a range it cannot serve.
fn serve_ranges(operation: &mut Operation) {
    let serves_bytes = |response: &RefOr<Response>| match response {
        RefOr::T(response) => response.content.contains_key("application/octet-stream"),
        RefOr::Ref(_) => false,
    };
    let responses = &mut operation.responses.responses;
    if !responses.get("200").is_some_and(serves_bytes) {
        return;
    }
    let partial = ResponseBuilder::new()
        .description("One range of them (`Range: bytes=…`)")
        .content("application/octet-stream", ContentBuilder::new().build())
        .build();
    let unchanged = ResponseBuilder::new()
        .description("`If-None-Match` names its `ETag`")
        .build();
    let unsatisfiable = error_response("`range_not_satisfiable` (`Content-Range: bytes */<size>`)");
    for (status, response) in [("206", partial), ("304", unchanged), ("416", unsatisfiable)] {
        responses
            .entry(status.to_string())
            .or_insert(RefOr::T(response));
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
