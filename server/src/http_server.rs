//! The HTTP server: actix-server accepts TCP connections, wraps each in the edge's
//! [`Connection`], and serves it with actix-http's HTTP/1 service around the app.
//!
//! actix-web's `HttpServer` is this same assembly, but it serves the TCP stream as it
//! comes; the wrapper is what gives the responses actix-http's parser writes itself (400,
//! 431, 408) the security headers (crate::edge). The settings are those Tandem gave
//! `HttpServer`: keep-alive (actix's 5 s), 10 s for a request's head, 1 s for a client to
//! close, `TCP_NODELAY`, and graceful shutdown (idle keep-alive connections close at
//! once, requests in flight get a second). A request's body has a pace of its own, kept
//! by the edge (`crate::edge`, `--body-timeout-ms`). A connection that ends in an error is
//! logged here: a client's mistake as a rate-limited warning, a server failure as an error.

use std::fmt;
use std::net::TcpListener;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use actix_http::body::MessageBody;
use actix_http::error::DispatchError;
use actix_http::{Extensions, HttpService, Request, Response};
use actix_service::{
    fn_service, map_config, IntoServiceFactory, ServiceFactory, ServiceFactoryExt,
};
use actix_web::dev::{AppConfig, Server, Service};
use actix_web::rt::net::TcpStream;

use crate::edge::Connection;

/// How long a client has to send a request's head (then 408).
const REQUEST_HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client has to close its side once the server closed its.
const DISCONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a stop waits for requests in flight, in seconds.
const SHUTDOWN_TIMEOUT_SECS: u64 = 1;

/// Serves the app `app` makes (once per worker) on `listener`, with `workers` threads
/// (by default one per core). `security_lines` are the header lines (`name: value\r\n`…)
/// a response the app did not write gets.
pub fn serve<F, I, S, B>(
    listener: TcpListener,
    workers: Option<usize>,
    security_lines: Vec<u8>,
    app: F,
) -> std::io::Result<Server>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as Service<Request>>::Future: 'static,
    B: MessageBody + 'static,
{
    // Signals are the application's to handle: it stops in its own order
    // (`Application::run_until_signalled`).
    let mut builder = Server::build()
        .shutdown_timeout(SHUTDOWN_TIMEOUT_SECS)
        .disable_signals();
    if let Some(workers) = workers {
        builder = builder.workers(workers);
    }
    let stopping = builder.graceful_shutdown_signal();
    let local = listener.local_addr()?;
    let lines: Arc<[u8]> = security_lines.into();
    let builder = builder.listen("tandem-http", listener, move || {
        let lines: Rc<[u8]> = Rc::from(&*lines);
        let stopping = stopping.clone();
        let app = app().into_factory().map_err(|error| {
            let error: actix_web::Error = error.into();
            error.error_response()
        });
        let http = HttpService::build()
            .client_request_timeout(REQUEST_HEAD_TIMEOUT)
            .client_disconnect_timeout(DISCONNECT_TIMEOUT)
            // A client that closes its side has gone: a page that reloads closes the
            // connection of its session list, whose stream would otherwise go on (holding
            // the user's socket place) until its next keep-alive write failed, 15 s later.
            .h1_allow_half_closed(false)
            .local_addr(local)
            .graceful_shutdown_signal(move || {
                let stopping = stopping.clone();
                async move { stopping.notified().await }
            })
            .on_connect_ext(
                |connection: &Connection<TcpStream>, data: &mut Extensions| {
                    data.insert(connection.app_responses());
                    data.insert(connection.end_reads());
                },
            )
            // Nothing in Tandem reads the app config (host name for URLs, local address);
            // the scheme comes from the request, as before.
            .h1(map_config(app, |_| AppConfig::default()));
        fn_service(move |stream: TcpStream| {
            let peer = stream.peer_addr().ok();
            let connection = Connection::accepted(stream, lines.clone());
            async move { Ok::<_, DispatchError>((connection, peer)) }
        })
        .and_then(http)
        .map_err(log_connection_error)
    })?;
    Ok(builder.run())
}

/// Logs a connection that ended in an error: a client's mistake as a rate-limited
/// warning, a client gone or slow to close at `debug`, anything else as an error.
fn log_connection_error(error: DispatchError) {
    match &error {
        DispatchError::Parse(_) | DispatchError::SlowRequestTimeout => {
            crate::telemetry::client_mistake("a malformed or slow request", &error);
        }
        DispatchError::Io(_)
        | DispatchError::DisconnectTimeout
        | DispatchError::HandlerDroppedPayload => {
            tracing::debug!(%error, "a connection ended early");
        }
        _ => tracing::error!(%error, "a connection failed"),
    }
}
