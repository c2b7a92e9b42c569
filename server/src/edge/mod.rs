//! The edge: what every request passes before a handler, and every response gets.
//!
//! - **Host** ([`hosts`]): the `Host` header must name this server (its bind address,
//!   `localhost`, an IP literal, or `--allowed-hosts`), else 421. A page on another site
//!   cannot reach a loopback Tandem through DNS rebinding: its requests carry its own
//!   host name.
//! - **Origin** ([`origins`]): a request that changes something, and every WebSocket
//!   upgrade, is refused with 403 when it comes from a browser page of another origin
//!   (its `Origin`, or `Sec-Fetch-Site` without one; scheme, host and port all count)
//!   that `--allowed-origins` does not list. Cross-site WebSocket hijacking and CSRF stop
//!   here, whatever the credentials.
//! - **CORS** ([`cors`]): pages of the origins `--allowed-origins` lists may call the API
//!   from the browser (a preflight is answered here); other origins get no CORS header.
//! - **Headers** ([`headers`]): CSP, `nosniff`, `Referrer-Policy`, framing refused; API
//!   responses are not cached.
//! - **Panics** ([`panics`]): a panicking handler answers 500 `internal`; the worker and
//!   every other request go on.
//! - **Heads the app did not write** ([`heads`], [`Connection`]): the responses
//!   actix-http's parser writes itself (400 for a malformed request, 431, 408) get the
//!   security headers on their way out of the connection.
//! - **Bodies that stop arriving** ([`bodies`]): a request body must keep a pace
//!   (`--body-timeout-ms`), else 408 `request_timeout` and the connection ends.
//!
//! It must not know about sessions or users: authentication is the handlers' [`Caller`]
//! argument (crate::auth).

mod bodies;
mod connection;
mod cors;
mod headers;
mod heads;
mod hosts;
mod origins;
mod panics;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, Method};
use actix_web::middleware::Next;
use actix_web::{web, ResponseError};

use bodies::BodyRead;
pub use bodies::EndReads;
pub use connection::Connection;
pub use headers::{content_security_policy, security_header_lines};
pub use heads::AppResponses;
pub use origins::canonical_origin;

use crate::error::ApiError;

/// What the edge lets through.
#[derive(Debug, Clone)]
pub struct EdgePolicy {
    /// Host names besides `localhost`, IP literals and the bind host.
    hosts: Vec<String>,
    /// Origins besides the server's own, canonical ([`canonical_origin`]).
    origins: Vec<String>,
    /// The page's Content-Security-Policy.
    csp: String,
    /// The window in which a request body must bring its pace (`--body-timeout-ms`).
    body_window: std::time::Duration,
}

impl EdgePolicy {
    /// A policy for a server bound to `bind`, with the extra hosts and origins configured;
    /// request bodies must keep their pace in windows of `body_window`.
    pub fn new(
        bind: &str,
        mut hosts: Vec<String>,
        origins: Vec<String>,
        csp: String,
        body_window: std::time::Duration,
    ) -> Self {
        if let Some((host, _port)) = bind.rsplit_once(':') {
            hosts.push(host.trim_matches(['[', ']']).to_ascii_lowercase());
        }
        let origins = origins
            .iter()
            .filter_map(|origin| canonical_origin(origin))
            .collect();
        Self {
            hosts,
            origins,
            csp,
            body_window,
        }
    }
}

/// The middleware (`middleware::from_fn(edge::guard)`).
pub async fn guard(
    mut request: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let policy = request
        .app_data::<web::Data<EdgePolicy>>()
        .expect("the edge policy is registered")
        .clone();
    let api = request.path().starts_with("/api/");
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string);
    let listed = cors::listed(&policy.origins, origin.as_deref()).map(str::to_string);
    let preflight = cors::is_preflight(request.method(), request.headers());
    let connection = request.conn_data::<AppResponses>().cloned();
    let end_reads = request.conn_data::<EndReads>().cloned();
    let answers_head = request.method() == Method::HEAD;
    let body = bodies::pace(&mut request, policy.body_window);
    let mut response = match refusal(&policy, &request) {
        Some(error) => request.into_response(error.error_response()),
        None if preflight => request.into_response(cors::preflight(listed.as_deref())),
        None => panics::call_catching(request, next).await?,
    };
    let read = body.map(|body| body.read());
    if read == Some(BodyRead::Stalled) {
        // Whatever the handler made of the failed read: the client is too slow, and its
        // connection, with the rest of its body, goes.
        let timeout = ApiError::RequestTimeout(policy.body_window.as_millis() as u64);
        response = response.into_response(timeout.error_response());
    }
    if matches!(read, Some(BodyRead::Stalled | BodyRead::Unfinished)) {
        // Nothing waits for the rest of a body the handler did not read: the response
        // says the connection closes (so no client sends another request on it), and
        // its reads end after a linger.
        response
            .response_mut()
            .head_mut()
            .set_connection_type(actix_web::http::ConnectionType::Close);
        if let Some(end_reads) = &end_reads {
            end_reads.end();
        }
    }
    if let Some(origin) = &listed {
        cors::allow(response.headers_mut(), origin);
    }
    headers::secure(response.headers_mut(), &policy.csp, api);
    if let Some(connection) = connection {
        connection.wrote(answers_head);
    }
    Ok(response)
}

/// Why the edge refuses a request, if it does.
fn refusal(policy: &EdgePolicy, request: &ServiceRequest) -> Option<ApiError> {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()))
        .unwrap_or_default();
    if !hosts::allowed(&policy.hosts, &host) {
        return Some(ApiError::HostNotAllowed(host.chars().take(100).collect()));
    }
    let upgrade = headers
        .get(header::UPGRADE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.eq_ignore_ascii_case("websocket"));
    let safe = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if safe && !upgrade {
        return None;
    }
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    let fetch_site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    let own = origins::own_origin(request.connection_info().scheme(), &host);
    match origins::allowed(&policy.origins, own.as_deref(), origin, fetch_site) {
        true => None,
        false => Some(ApiError::OriginNotAllowed(
            origin.unwrap_or("(none)").chars().take(100).collect(),
        )),
    }
}
