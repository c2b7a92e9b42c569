//! The page's building blocks. Each component reads what it shows from the state in context
//! ([`crate::state`]) and writes only through it; none of them talks to the network itself.

pub mod approval;
pub mod composer;
pub mod deadline;
pub mod form;
pub mod header;
pub mod interrupt;
pub mod message;
pub mod notice;
pub mod responder;
pub mod sidebar;
pub mod sign_in;
pub mod tool_call;
pub mod transcript;

pub use composer::Composer;
pub use header::Header;
pub use notice::Notice;
pub use sidebar::Sidebar;
pub use sign_in::SignIn;
pub use transcript::Transcript;
