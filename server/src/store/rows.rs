//! Reading rows, the same on every backend: the column lists and the tuples they decode
//! into, turned into the store's row types (a value that does not parse is
//! `StoreError::Corrupt`).

use shared::api::SessionStatus;

use crate::domain::{SessionId, UserId};
use crate::store::{Fork, InterruptRow, InterruptState, SessionRow, StoreError};

pub(crate) type SessionTuple = (
    String,
    String,
    String,
    String,
    Option<String>,
    i64,
    i64,
    i64,
    Option<String>,
    Option<i64>,
    String,
);
pub(crate) const SESSION_COLUMNS: &str = "id, owner_id, title, status, active_run_id, last_seq, \
     created_at, updated_at, parent_id, fork_seq, coalesce(root_id, id)";

pub(crate) fn session_from(row: SessionTuple) -> Result<SessionRow, StoreError> {
    let (
        id,
        owner,
        title,
        status,
        active_run_id,
        last_seq,
        created_at,
        updated_at,
        parent,
        at,
        conversation,
    ) = row;
    let fork = match (parent, at) {
        (Some(parent), Some(at)) => Some(Fork {
            parent: SessionId::parse(&parent).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            at_seq: at as u64,
        }),
        _ => None,
    };
    Ok(SessionRow {
        id: SessionId::parse(&id).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        owner: UserId::parse(&owner).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        title,
        status: SessionStatus::parse(&status)
            .ok_or_else(|| StoreError::Corrupt(format!("status `{status}`")))?,
        active_run_id,
        last_seq: last_seq as u64,
        created_at,
        updated_at,
        fork,
        conversation: SessionId::parse(&conversation)
            .map_err(|e| StoreError::Corrupt(e.to_string()))?,
    })
}

pub(crate) type InterruptTuple = (
    String,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
);

pub(crate) fn interrupt_from(row: InterruptTuple) -> Result<InterruptRow, StoreError> {
    let (id, session_id, run_id, tool_call_id, interrupt, state, response, resumed_run_id) = row;
    let corrupt = |e: &dyn std::fmt::Display| StoreError::Corrupt(e.to_string());
    Ok(InterruptRow {
        id,
        session_id: SessionId::parse(&session_id).map_err(|e| corrupt(&e))?,
        run_id,
        tool_call_id,
        interrupt: serde_json::from_str(&interrupt).map_err(|e| corrupt(&e))?,
        state: InterruptState::parse(&state),
        response: response
            .map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(|e| corrupt(&e))?,
        resumed_run_id,
    })
}

pub(crate) const INTERRUPT_COLUMNS: &str =
    "id, session_id, run_id, tool_call_id, interrupt, status, response, resumed_run_id";

/// A session id read from a row of one column.
pub(crate) fn session_id_of((id,): (String,)) -> Result<SessionId, StoreError> {
    SessionId::parse(&id).map_err(|e| StoreError::Corrupt(e.to_string()))
}
