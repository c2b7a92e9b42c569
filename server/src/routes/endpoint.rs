//! One entry of the route table: where an endpoint answers, who may call it, what it
//! takes, its handler and its annotation. The table itself is [`super::table`]; what the
//! OpenAPI document makes of an entry is [`super::openapi`]'s.
//!
//! An entry holds its handler already built for one backend (an `actix_web::Route`), so
//! reading the table for its paths builds the routes too: they are inert until registered.

use actix_web::{web, FromRequest, Handler, Responder};
use utoipa::openapi::path::HttpMethod;

use super::openapi::{Annotated, Annotation};
use super::query;

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

/// An HTTP method a route answers: its name, actix's route for it and the document's name
/// for it.
pub struct Verb(&'static str, fn() -> actix_web::Route, HttpMethod);

/// `GET`.
pub const GET: Verb = Verb("GET", web::get, HttpMethod::Get);
/// `POST`.
pub const POST: Verb = Verb("POST", web::post, HttpMethod::Post);
/// `PUT`.
pub const PUT: Verb = Verb("PUT", web::put, HttpMethod::Put);
/// `PATCH`.
pub const PATCH: Verb = Verb("PATCH", web::patch, HttpMethod::Patch);
/// `DELETE`.
pub const DELETE: Verb = Verb("DELETE", web::delete, HttpMethod::Delete);

/// One endpoint of the table.
pub struct Endpoint {
    pub method: &'static str,
    /// The same method, as the document names it.
    pub(super) operation: HttpMethod,
    /// The path pattern, actix style (`{id}`), as the annotation names it too.
    pub path: &'static str,
    pub access: Access,
    /// The query parameters it takes; any other is refused with 400 ([`query`]).
    pub query: &'static [&'static str],
    /// Whether the document says it may answer 503 because storage did not answer (true
    /// unless [`Endpoint::without_storage`]).
    pub storage: bool,
    /// What it spends of the caller's allowances ([`Endpoint::spending`]); the document
    /// says it may answer 429 (and 503 for a place in the run queue) from this.
    pub spends: &'static [Spend],
    /// What its `#[utoipa::path]` says of it alone; the document adds what the entry implies.
    pub annotation: Annotation,
    route: actix_web::Route,
}

/// An allowance of the caller's that a route spends, refused with 429 (`Retry-After`)
/// once it runs out (`crate::limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spend {
    /// New sessions this minute (`--sessions-per-minute`).
    Sessions,
    /// Messages this minute (`--messages-per-minute`).
    Messages,
    /// Share links created this minute (`--shares-per-minute`).
    ShareLinks,
    /// Tools uploaded this minute (`--tool-uploads-per-minute`).
    ToolUploads,
    /// Bytes of AG-UI input this minute (`--agui-input-bytes-per-minute`).
    InputBytes,
    /// A place in the run queue: 429 `too_many_queued_runs` when the caller's share of it
    /// is full, 503 `saturated` when the queue is.
    RunQueue,
}

/// Where an endpoint answers and who may call it, waiting for its handler.
pub struct Place {
    verb: Verb,
    path: &'static str,
    access: Access,
}

/// The endpoint at `verb path`, for `access`; [`Place::to`] gives it its handler.
pub fn route(verb: Verb, path: &'static str, access: Access) -> Place {
    Place { verb, path, access }
}

impl Place {
    /// The endpoint whose handler is `handler`, documented by `annotation` (the
    /// `__path_<handler>` that `#[utoipa::path]` generates beside it).
    pub fn to<F, Args>(self, handler: F, annotation: impl Annotated) -> Endpoint
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        let Verb(method, route, operation) = self.verb;
        Endpoint {
            method,
            operation,
            path: self.path,
            access: self.access,
            query: &[],
            spends: &[],
            storage: true,
            annotation: Annotation::of(annotation),
            route: route().to(handler),
        }
    }
}

impl Endpoint {
    /// This route, taking the query parameters `names`.
    pub fn taking(self, names: &'static [&'static str]) -> Self {
        Self {
            query: names,
            ..self
        }
    }

    /// This route, spending `allowances` of its caller's.
    pub fn spending(self, allowances: &'static [Spend]) -> Self {
        Self {
            spends: allowances,
            ..self
        }
    }

    /// This route, which reaches the store neither in its handler nor to check its
    /// caller (a public route): the document lists no 503 "Storage unavailable" for it. A
    /// user's route reaches it whenever the server checks credentials (`--auth token`).
    pub fn without_storage(self) -> Self {
        debug_assert!(
            self.access == Access::Public,
            "a user's route checks its caller in the store"
        );
        Self {
            storage: false,
            ..self
        }
    }

    /// Whether its path names one of the caller's sessions (`{id}`).
    pub fn names_session(&self) -> bool {
        self.path.contains("/{id}")
    }

    /// Its handler, refusing any query parameter it does not take.
    pub(super) fn into_route(self) -> actix_web::Route {
        query::taking_only(self.route, self.query)
    }
}
