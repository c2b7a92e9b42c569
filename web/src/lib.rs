//! Tandem's page: a Leptos client-side app where a person and an agent work together.
//!
//! # Layout
//! - [`api`] — the wire: REST calls and the reconnecting session socket, failing with
//!   [`api::ApiError`] (the server's JSON error, mirrored).
//! - [`state`] — the transcript fold and interrupt helpers (pure, tested on the host), and
//!   the reactive state shared through context: the open session and the session list.
//! - [`components`] — the pieces of the screen: sidebar, header, transcript rows, cards,
//!   composer.
//! - [`markdown`] — the agent's Markdown as safe HTML (pure, tested on the host).
//! - [`pages`] — the screen itself, [`App`], which `main.rs` mounts.

pub mod api;
pub mod components;
pub mod markdown;
pub mod pages;
pub mod state;

pub use pages::App;
