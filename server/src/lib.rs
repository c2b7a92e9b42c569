//! Tandem: a server where a person and an LLM agent work in tandem.
//!
//! # Layout
//! - [`config`], [`telemetry`], [`startup`]: reading settings and assembling the app.
//! - [`domain`]: identifiers and time.
//! - [`store`]: the event log behind the [`store::Store`] trait (SQLite backend).
//! - [`eventlog`]: the group-commit writer and the live hub; nothing reaches a viewer
//!   before it is committed.
//! - [`agent`]: engines, tools and the run loop, started and stopped by the runner.
//! - [`retention`]: deleting finished sessions past a configured age.
//! - [`routes`] (REST) and [`ws`] (the session socket) are thin adapters over the runner.

pub mod agent;
pub mod config;
pub mod domain;
pub mod error;
pub mod eventlog;
pub mod retention;
pub mod routes;
pub mod startup;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod ws;

pub use config::Config;
pub use startup::Application;
