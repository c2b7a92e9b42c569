//! Messages waiting for their turn: sent while a run worked, each keeps a row until the
//! transaction that starts its run, appends it to the active run (a steering message), or
//! withdraws it. So a queued message runs once, whichever instance takes it.

use std::future::Future;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::StoreError;
use crate::domain::SessionId;

/// How many messages one session may hold waiting.
pub const MAX_QUEUED: u64 = 32;

/// A message waiting for its turn.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedRow {
    /// Its id, and its `TEXT_MESSAGE_START.messageId` once it runs.
    pub id: String,
    /// The run it starts.
    pub run_id: String,
    /// Joins the active run at its next model call instead of waiting for its end.
    pub steer: bool,
    /// The caller's id for the request, which a repeat is known by.
    pub client_message_id: Option<String>,
    pub text: String,
    pub extra: QueuedExtra,
}

/// What else starts a queued message's run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedExtra {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The AG-UI input that brought it, for its run's `RUN_STARTED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// The files and images it carries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<shared::attachments::Attachment>,
}

impl QueuedRow {
    /// Its `kind` column.
    pub(crate) fn kind(&self) -> &'static str {
        if self.steer {
            "steer"
        } else {
            "queue"
        }
    }

    /// Its `extra` column.
    pub(crate) fn extra_json(&self) -> String {
        serde_json::to_string(&self.extra).expect("queued extras serialise")
    }

    /// As the API and the sockets' `queue` frames show it.
    pub fn message(&self) -> shared::queue::QueuedMessage {
        shared::queue::QueuedMessage {
            id: self.id.clone(),
            run_id: self.run_id.clone(),
            text: self.text.clone(),
            steer: self.steer,
            model: self.extra.model.clone(),
            attachments: self.extra.attachments.clone(),
        }
    }
}

/// A `queued_messages` row as read: id, run, kind, client message id, text, extra.
pub(crate) type QueuedTuple = (String, String, String, Option<String>, String, String);

/// The columns of a [`QueuedTuple`], in order.
pub(crate) const QUEUED_COLUMNS: &str = "id, run_id, kind, client_message_id, text, extra";

/// Decodes a row read as [`QUEUED_COLUMNS`].
pub(crate) fn queued_from(row: QueuedTuple) -> Result<QueuedRow, StoreError> {
    let (id, run_id, kind, client_message_id, text, extra) = row;
    let extra = serde_json::from_str(&extra)
        .map_err(|e| StoreError::Corrupt(format!("queued message {id}: {e}")))?;
    Ok(QueuedRow {
        id,
        run_id,
        steer: kind == "steer",
        client_message_id,
        text,
        extra,
    })
}

/// Reading queued messages: the log's writer adds, takes and withdraws them with the
/// events of their session (the guards); these read them.
pub trait QueueReads: Send + Sync + 'static {
    /// The session's queued messages, in the order they run.
    fn queued_messages(
        &self,
        session: SessionId,
    ) -> impl Future<Output = Result<Vec<QueuedRow>, StoreError>> + Send;

    /// Idle sessions that hold queued messages (nothing runs to take them: a crash came
    /// between a run's end and the next start), least recently updated first.
    fn idle_with_queue(&self) -> impl Future<Output = Result<Vec<SessionId>, StoreError>> + Send;
}
