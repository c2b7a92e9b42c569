//! Tandem's page: a Leptos client-side app where a person and an agent work together.
//!
//! # Layout
//! - [`api`] — the wire: REST calls and the reconnecting session socket, failing with
//!   [`api::ApiError`] (the server's JSON error, mirrored).
//! - [`state`] — the transcript fold and interrupt helpers (pure, tested on the host), and
//!   the reactive state shared through context: the open session and the session list.
//! - [`components`] — the pieces of the screen: sidebar, header, transcript rows, cards,
//!   composer.
//! - [`markdown`] — the agent's Markdown as safe HTML (the `tandem-markdown` crate, which the
//!   server's first-paint preview renders with too).
//! - [`first_paint`] — takes away the transcript the server rendered for the first paint.
//! - [`pages`] — the screen itself, [`App`], which `main.rs` mounts.

pub mod api;
pub mod components;
pub mod first_paint;
pub mod pages;
pub mod state;

pub use markdown;
pub use pages::App;
