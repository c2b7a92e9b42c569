//! Tandem: a server where a person and an LLM agent work in tandem.
//!
//! # Layout
//! - [`config`], [`telemetry`], [`startup`]: reading settings and assembling the app;
//!   [`lifecycle`]: the clean stop every long-lived task takes part in.
//! - [`domain`]: identifiers and time.
//! - [`store`]: the event log and the records behind [`store::Store`], a trait per job
//!   (SQLite and PostgreSQL backends).
//! - [`eventlog`]: the group-commit writer and the live hub; nothing reaches a viewer
//!   before it is committed.
//! - [`agent`]: engines, tools and the run loop, started and stopped by the runner.
//! - [`mcp`]: MCP servers (stdio, streamable HTTP) whose tools the model may call.
//! - [`retention`]: deleting finished sessions past a configured age.
//! - [`http_server`]: the HTTP server, over the edge's connection wrapper.
//! - [`edge`]: what every request passes first (Host, Origin, security headers, panics);
//!   [`auth`]: who a request acts for; [`limits`]: per-user rates and sockets.
//! - [`agui`]: AG-UI over HTTP (a `RunAgentInput` in, the run's events out as SSE) for
//!   any AG-UI client.
//! - [`routes`] (REST) and [`ws`] (the session socket) are thin adapters over the runner;
//!   [`scrub`] keeps secrets out of what leaves the server; [`visibility`] is what a
//!   share link's viewer may see; [`standing`] ends sockets and streams the moment their
//!   credential ends; [`export`] turns a session into Markdown or JSON.

pub mod agent;
pub mod agui;
pub mod attachments;
pub mod auth;
pub mod config;
#[cfg(test)]
mod docs_tests;
pub mod domain;
pub mod edge;
pub mod error;
pub mod eventlog;
pub mod export;
pub mod feedback_cli;
pub mod http_server;
pub mod lifecycle;
pub mod limits;
pub mod mcp;
pub mod metrics;
pub mod retention;
pub mod routes;
pub mod scrub;
pub mod session_list;
pub mod standing;
pub mod startup;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod visibility;
pub mod webhooks;
pub mod ws;

pub use config::Config;
pub use startup::Application;
