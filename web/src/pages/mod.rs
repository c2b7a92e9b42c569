//! Whole screens. There is one: the workspace ([`App`]), a session list beside the open
//! session.

pub mod app;
pub mod session;

pub use app::App;
