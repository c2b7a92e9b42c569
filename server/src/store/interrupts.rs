//! Interrupts as the store keeps them: where each stands, its row, and their reads.

use std::future::Future;

use super::StoreError;
use crate::domain::SessionId;

/// Where an interrupt stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterruptState {
    Pending,
    Resolved,
    Cancelled,
    /// Nobody answered before its deadline.
    Expired,
}

impl InterruptState {
    /// Reads the database spelling; anything unknown is still waiting.
    pub(super) fn parse(text: &str) -> Self {
        match text {
            "resolved" => Self::Resolved,
            "cancelled" => Self::Cancelled,
            "expired" => Self::Expired,
            _ => Self::Pending,
        }
    }

    /// The database and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Resolved => "resolved",
            Self::Cancelled => "cancelled",
            Self::Expired => "expired",
        }
    }
}

/// An interrupt row: the AG-UI interrupt plus its answer, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct InterruptRow {
    pub id: String,
    pub session_id: SessionId,
    pub run_id: String,
    pub tool_call_id: String,
    pub interrupt: shared::Interrupt,
    pub state: InterruptState,
    pub response: Option<serde_json::Value>,
    /// The run the answer started.
    pub resumed_run_id: Option<String>,
}

/// Reading interrupts: the log's writer records them with the events that raise and
/// answer them (`store/effects.rs`, the guards); these read them.
pub trait InterruptReads: Send + Sync + 'static {
    /// One interrupt of a session, if it exists there.
    fn interrupt(
        &self,
        session: SessionId,
        interrupt_id: &str,
    ) -> impl Future<Output = Result<Option<InterruptRow>, StoreError>> + Send;

    /// The session's interrupts still waiting for an answer.
    fn pending_interrupts(
        &self,
        session: SessionId,
    ) -> impl Future<Output = Result<Vec<InterruptRow>, StoreError>> + Send;

    /// Pending interrupts whose deadline is at or before `now_ms`, earliest first. Every
    /// instance's sweeper may read the same ones; the answer's guard lets one expiry
    /// through.
    fn expired_interrupts(
        &self,
        now_ms: i64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<InterruptRow>, StoreError>> + Send;
}
