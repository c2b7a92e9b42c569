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

use crate::routes::{Access, Endpoint};

/// An error response many operations share: its status, what it says, and whether it
/// applies to an operation (from its table entry and its annotation).
struct Common {
    status: &'static str,
    description: &'static str,
    applies: fn(&Endpoint, &Operation) -> bool,
}

/// The shared error responses; for each status the first that applies counts.
const COMMON: &[Common] = &[
    Common {
        status: "400",
        description: "Malformed body or id",
        applies: |endpoint, operation| endpoint.names_session() && takes_json(operation),
    },
    Common {
        status: "400",
        description: "Not a session id",
        applies: |endpoint, _| endpoint.names_session(),
    },
    Common {
        status: "400",
        description: "Malformed body",
        applies: |_, operation| takes_json(operation),
    },
    Common {
        status: "401",
        description: "No valid credentials",
        applies: |endpoint, _| endpoint.access == Access::User,
    },
    Common {
        status: "404",
        description: "No such session of the caller's",
        applies: |endpoint, _| endpoint.names_session(),
    },
    Common {
        status: "406",
        description: "`Accept` excludes `text/event-stream`",
        applies: |_, operation| streams_events(operation),
    },
    Common {
        status: "413",
        description: "Body too large",
        applies: |_, operation| takes_json(operation),
    },
    Common {
        status: "415",
        description: "A body that is not JSON (`application/json` or `application/…+json`)",
        applies: |_, operation| takes_json(operation),
    },
    Common {
        status: "503",
        description: "Storage unavailable",
        applies: |endpoint, _| endpoint.storage,
    },
];

/// Path parameters many routes name, described once by their name: the name, what it
/// is, and whether it is a UUID.
const PATH_PARAMETERS: &[(&str, &str, bool)] = &[
    ("id", "The session id (a UUID)", true),
    ("token", "The link's secret (`tds_…`)", false),
    ("attachment", "The attachment's id", false),
    ("queued", "The queued message's id", false),
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
    for shared in COMMON {
        let listed = common.iter().any(|(status, _)| *status == shared.status);
        if !listed && (shared.applies)(endpoint, &operation) {
            common.push((shared.status, shared.description));
        }
    }
    let responses = &mut operation.responses.responses;
    for (status, description) in common {
        if let Entry::Vacant(missing) = responses.entry(status.to_string()) {
            missing.insert(RefOr::T(error_response(description)));
        }
    }
    refuse_queries(&mut operation);
    time_out_bodies(&mut operation);
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
