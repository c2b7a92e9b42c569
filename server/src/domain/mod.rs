//! Domain newtypes: identifiers that are parsed once at the edge and trusted inside.
//!
//! It must not know about HTTP, SQL or sockets.

mod clock;
mod ids;
mod secret;
mod time;
mod token_hash;
mod urls;
mod user;

pub use clock::Clock;
pub use ids::{new_id, IdError, SessionId};
pub use secret::Secret;
pub use time::{deadline_ms, now_ms, rfc3339, rfc3339_after};
pub use token_hash::TokenHash;
pub use urls::{canonical_origin, hide_user_info, origin};
pub use user::{UserError, UserId, UserName};
