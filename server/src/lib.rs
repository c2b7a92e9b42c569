//! Tandem: a server where a person and an LLM agent work in tandem.
//!
//! # Layout
//! Every module, one line on its job, in groups from the leaves up: a group builds on those
//! before it (where a module of an earlier group names a later one, the list says so).
//! Between files no import circle holds more than two (`scripts/import_circles.py`, which
//! the test command runs, fails on one of more than three).
//!
//! **Leaves**
//! - [`domain`]: identifiers, time, secrets and URL text, parsed once and trusted inside.
//! - [`config`]: flags, `TANDEM_*` variables and `tandem.toml` into plain settings; imports
//!   nothing of the crate but [`domain`].
//! - [`telemetry`]: logging (`tracing`, text or JSON lines), and a panic's text.
//! - [`lifecycle`]: the clean stop every long-lived task takes part in.
//! - [`scrub`]: secrets kept out of what leaves the server (errors, logs).
//!
//! **Storage and the log**
//! - [`store`]: the event log and the records behind [`store::Store`], a trait per job that
//!   each backend (SQLite, PostgreSQL) implements; nothing outside it knows which one runs.
//! - [`metrics`]: the Prometheus families (`GET /metrics`), Tandem's own and the GenAI
//!   conventions' client histograms.
//! - [`traces`]: OpenTelemetry spans of runs (GenAI conventions) made from the log, and of
//!   HTTP requests, exported over OTLP; `tandem traces export` for past sessions.
//! - [`visibility`]: what a share link's viewer may see of an event.
//! - [`eventlog`]: the group-commit writer and the live hub; nothing reaches a viewer
//!   before it is committed.
//! - [`attachments`]: files and images: what an upload is, streaming it into the store,
//!   fetching one from a listed origin.
//!
//! **The agent**
//! - [`mcp`]: MCP servers (stdio, streamable HTTP) whose tools the model may call (their
//!   specs and progress are the agent's tools' words, the registry holds them).
//! - [`agent`]: engines, tools, one run's loop (`agent/run/`) and the runner that starts
//!   and stops runs, with its views (`agent/runner/`): views → runner → run loop →
//!   recorder.
//! - [`sandbox`]: WebAssembly tools under Wasmtime (WASI preview 1): fuel, memory and time
//!   limits, calls off the async workers, nothing of the host but what a manifest grants;
//!   each module a tool of the agent's registry.
//! - [`error`]: the one error type of every entry point, with its code and status (it
//!   turns the runner's and the store's refusals into HTTP).
//! - [`webhooks`]: signed POSTs when a session waits for a person, delivered at least once.
//! - [`retention`]: deleting finished sessions past a configured age.
//! - [`schedules`]: runs nobody starts by hand, each scheduled time fired once (and
//!   `tandem schedules`).
//! - [`replays`]: a recorded run sent again k times per variant, its side effects never
//!   run again, each trial scored (pass^k).
//!
//! **Who may do what**
//! - [`auth`]: who a request acts for (tokens, sign-in cookies, `tandem users`), and the
//!   endings of credentials.
//! - [`limits`]: per-user rates and socket counts.
//! - [`standing`]: a long-lived connection's credential, ended the moment it ends.
//! - [`session_list`]: each signed-in page's live list of sessions.
//! - [`state`]: what every handler shares ([`state::AppState`]; it holds the session
//!   lists, and AG-UI's field limits).
//! - [`access`]: who reaches which session or share link (routes, sockets, AG-UI and the
//!   standing checks all ask it).
//! - [`relay`]: what other instances commit, brought to this one's hub, runs, endings and
//!   lists.
//!
//! **The doors**
//! - [`edge`]: what every request passes first (Host, Origin, security headers, panics).
//! - [`agui`]: AG-UI over HTTP (a `RunAgentInput` in, the run's events out as SSE).
//! - [`ws`]: the session socket (`after=<seq>`: what was missed, then live).
//! - [`export`]: a session as Markdown, JSON or a zip.
//! - [`routes`]: REST under `/api`, the route table, the OpenAPI document, the page.
//! - [`feedback_cli`]: `tandem feedback`, everyone's ratings from the shell.
//! - [`http_server`]: the HTTP server, over the edge's connection wrapper.
//! - [`startup`]: checking the settings and assembling the app from them.

pub mod access;
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
pub mod relay;
pub mod replays;
pub mod retention;
pub mod routes;
pub mod sandbox;
pub mod schedules;
pub mod scrub;
pub mod session_list;
pub mod standing;
pub mod startup;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod traces;
pub mod visibility;
pub mod webhooks;
pub mod ws;

pub use config::Config;
pub use startup::Application;
