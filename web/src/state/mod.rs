//! The page's state. Who the page acts for is [`auth`]. The pure part — the transcript fold ([`transcript`], [`item`]), the
//! interrupt and tool-approval helpers ([`interrupt`], [`approval`]), recorded answers
//! ([`answer`]), deadlines ([`deadline`]), refused answers ([`refusal`]) and what a key
//! press means ([`keys`]) — has no
//! signals or DOM and is tested on the host; the reactive part — the open session ([`session`]), the
//! session list ([`sessions`]) and the hash route ([`route`]) — is shared with components
//! through context. The colour theme ([`theme`]) lives on `<html>` and in `localStorage`.

pub mod answer;
pub mod answer_diff;
pub mod approval;
pub mod attachments;
pub mod auth;
pub mod deadline;
pub mod feedback;
pub mod header_fit;
pub mod inbox;
pub mod interrupt;
pub mod item;
pub mod keys;
pub mod layout;
pub mod models;
pub mod refusal;
pub mod route;
pub mod scores;
pub mod session;
pub mod sessions;
pub mod shared_state;
pub mod theme;
pub mod timeline;
pub mod transcript;
pub mod usage;
pub mod waiting;

pub use auth::{provide_auth, use_auth, Auth, AuthState};
pub use item::{Item, ItemBody, RunState};
pub use layout::{provide_layout, use_layout, Layout};
pub use models::{provide_models, use_models, Models};
pub use session::{provide_session, provide_shared_session, use_session, History, Session};
pub use sessions::{provide_sessions, use_sessions, SessionList};
