//! Interrupts as the store keeps them: where each stands, and its row.

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
