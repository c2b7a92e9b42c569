//! Messages a person sends while a run works: what they ask for (`whileRunning`) and the
//! queued messages waiting for their turn.

use serde::{Deserialize, Serialize};

/// What a message sent while a run is active (or a question waits) does.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WhileRunning {
    /// Waits its turn: it starts the next run when the active one ends (finished, stopped
    /// or failed). A run that pauses for a person keeps its question; queued messages
    /// wait for the answer, in order.
    #[default]
    Queue,
    /// Stops the active run (its partial answer kept, as Stop does), then runs first.
    Interrupt,
    /// Joins the active run at its next model call, as a message the model reads; if the
    /// run ends first, it runs as a queued message.
    Steer,
    /// Refused with 409 `run_active` (or `awaiting_input`).
    Reject,
}

impl WhileRunning {
    /// Every mode, in the order they are documented.
    pub const ALL: [WhileRunning; 4] = [Self::Queue, Self::Interrupt, Self::Steer, Self::Reject];

    /// Its name on the wire and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queue => "queue",
            Self::Interrupt => "interrupt",
            Self::Steer => "steer",
            Self::Reject => "reject",
        }
    }

    /// The mode of that name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|mode| mode.as_str() == name)
    }
}

/// A message waiting for its turn (`GET /api/sessions/{id}/queue`, a socket's `queue`
/// frame).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedMessage {
    /// Its id: `PATCH`/`DELETE /api/sessions/{id}/queue/{queuedId}` name it, and it is the
    /// `messageId` of its `TEXT_MESSAGE_START` once it runs.
    pub id: String,
    /// The run it starts when its turn comes (its `RUN_STARTED.runId`).
    pub run_id: String,
    pub text: String,
    /// True for a steering message: it joins the active run at its next model call.
    #[serde(default)]
    pub steer: bool,
    /// The model it runs on, if the person picked one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The files and images it carries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<crate::attachments::Attachment>,
}

/// `GET /api/sessions/{id}/queue`: the messages waiting, in the order they run.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueuedList {
    pub queued: Vec<QueuedMessage>,
}

#[cfg(test)]
mod tests {
    use super::WhileRunning;

    #[test]
    fn each_mode_reads_back_its_own_name() {
        for mode in WhileRunning::ALL {
            assert_eq!(WhileRunning::parse(mode.as_str()), Some(mode));
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{}\"", mode.as_str()));
        }
        assert_eq!(WhileRunning::parse("later"), None);
    }
}
