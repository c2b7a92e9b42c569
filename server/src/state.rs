//! What every handler shares.

use std::sync::Arc;
use std::time::Duration;

use shared::api::ServerInfo;

use crate::agent::Runner;
use crate::auth::{AuthMode, Endings};
use crate::config::Heartbeat;
use crate::eventlog::Hub;
use crate::limits::{RateLimits, SocketCounts};

/// The application state, generic over the storage backend.
pub struct AppState<S> {
    pub store: Arc<S>,
    pub runner: Runner<S>,
    pub hub: Hub,
    pub info: ServerInfo,
    pub heartbeat: Heartbeat,
    pub auth_mode: AuthMode,
    /// How long a browser sign-in lasts.
    pub sign_in_ttl: Duration,
    pub limits: InputLimits,
    /// What an upload may take.
    pub attachments: crate::attachments::UploadLimits,
    /// Where an AG-UI client's files may be fetched from by URL (`--attachment-url-origins`).
    pub url_origins: crate::attachments::fetch::UrlOrigins,
    pub rates: RateLimits,
    pub sockets: SocketCounts,
    /// Share links one session may have.
    pub max_shares_per_session: u32,
    /// The users who may read everyone's feedback (`--operators`; `local` under
    /// `--auth none`).
    pub operators: Vec<String>,
    /// Where credentials that ended are announced to this instance's connections.
    pub endings: Endings,
    /// The session lists open on this instance, told of each change the relay hears.
    pub lists: crate::session_list::ListWatchers,
    /// The process's stop: sockets and AG-UI streams end when it begins.
    pub lifecycle: crate::lifecycle::Lifecycle,
    /// This instance's scheduler: schedules' rules and clock, "run now", its wake.
    pub scheduler: crate::schedules::Scheduler<S>,
    /// This instance's driver of replays' trials.
    pub replays: crate::replays::Replayer<S>,
}

/// Sizes of what clients send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimits {
    /// Largest REST body, in bytes.
    pub max_body_bytes: usize,
    /// Largest socket message, in bytes.
    pub max_frame_bytes: usize,
    /// Largest free-form fields of an AG-UI input.
    pub agui: crate::agui::FieldLimits,
}
