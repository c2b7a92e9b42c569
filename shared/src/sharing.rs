//! REST bodies for renaming sessions and for their read-only share links.

use serde::{Deserialize, Deserializer, Serialize};

use crate::api::SessionStatus;
use crate::fields::read_object;

/// `PATCH /api/sessions/{id}` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RenameSession {
    /// The new title; not blank, at most 200 characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 200, pattern = r"\S")
    )]
    pub title: String,
}

/// `POST /api/sessions/{id}/shares` body: what the link's viewer may not see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateShare {
    /// Hide the agent's reasoning.
    #[serde(default)]
    pub hide_reasoning: bool,
    /// Hide the arguments of tool calls (names and results stay).
    #[serde(default)]
    pub hide_tool_arguments: bool,
    /// Show the files and images attached to messages (their names, and their bytes
    /// through `GET /api/shared/{token}/attachments/{id}`); true when absent.
    #[serde(default = "shown")]
    pub attachments: bool,
    /// Show the shared state (`STATE_SNAPSHOT`, `STATE_DELTA`); true when absent.
    #[serde(default = "shown")]
    pub state: bool,
    /// Show the instructions the model was given (the person's own and the
    /// conversation's, `CUSTOM tandem.instructions`); false when absent.
    #[serde(default)]
    pub instructions: bool,
}

impl Default for CreateShare {
    fn default() -> Self {
        Self {
            hide_reasoning: false,
            hide_tool_arguments: false,
            attachments: true,
            state: true,
            instructions: false,
        }
    }
}

fn shown() -> bool {
    true
}

/// A share link as its owner lists it (the secret part of its URL is not kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Share {
    pub id: String,
    pub hide_reasoning: bool,
    pub hide_tool_arguments: bool,
    /// The link shows the files and images attached.
    pub attachments: bool,
    /// The link shows the shared state.
    pub state: bool,
    /// The link shows the instructions.
    #[serde(default)]
    pub instructions: bool,
    pub created_at: i64,
}

/// `201` of `POST /api/sessions/{id}/shares`: the link, shown this once. Read from JSON by
/// hand ([`crate::fields`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CreatedShare {
    #[serde(flatten)]
    pub share: Share,
    /// The secret that opens the link; only its hash is stored.
    pub token: String,
    /// The page's address of the link, relative to the server (`/#/shared/<token>`).
    pub path: String,
}

/// `GET /api/sessions/{id}/shares`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShareList {
    pub shares: Vec<Share>,
}

/// `GET /api/shared/{token}`: what a link's viewer learns about the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SharedSession {
    pub title: String,
    pub status: SessionStatus,
    pub last_seq: u64,
    pub hide_reasoning: bool,
    pub hide_tool_arguments: bool,
    /// The link shows the files and images attached.
    #[serde(default)]
    pub attachments: bool,
    /// The link shows the shared state.
    #[serde(default)]
    pub state: bool,
    /// The link shows the instructions.
    #[serde(default)]
    pub instructions: bool,
}

impl<'de> Deserialize<'de> for CreatedShare {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_object(deserializer, |f| {
            Ok(Self {
                token: f.string("token")?,
                path: f.string("path")?,
                share: f.rest()?,
            })
        })
    }
}
