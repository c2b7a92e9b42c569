//! Whole screens: the workspace ([`App`]), a session list beside the open session, and
//! the read-only view a share link opens ([`shared::SharedPage`]).

pub mod app;
pub mod session;
pub mod shared;

pub use app::App;
