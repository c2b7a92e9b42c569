//! What every handler shares.

use std::sync::Arc;

use shared::api::ServerInfo;

use crate::agent::Runner;
use crate::eventlog::Hub;
use crate::ws::Heartbeat;

/// The application state, generic over the storage backend.
pub struct AppState<S> {
    pub store: Arc<S>,
    pub runner: Runner<S>,
    pub hub: Hub,
    pub info: ServerInfo,
    pub heartbeat: Heartbeat,
}
