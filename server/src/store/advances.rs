//! What a batch of plain appends does to each of its sessions, the same on every backend:
//! how many events each gets and the status its last status-changing command leaves.
//!
//! A session's `updated_at` moves when its status changes (a run starts, pauses, ends)
//! or a person acts on it, not with each token: the list's order is the same, and the
//! token path's UPDATE changes no indexed column (PostgreSQL makes it a heap-only
//! update).

use std::collections::HashMap;

use shared::api::SessionStatus;

use super::{Command, Effects};

/// What the batch does to one session.
pub(crate) struct Advance {
    pub id: String,
    pub count: i64,
    /// The status the session's last status-changing command leaves it in.
    pub status: Option<(SessionStatus, Option<String>)>,
}

/// The per-session totals of a batch, in order of first appearance.
pub(crate) fn advances(batch: &[Command], effects: &[Effects]) -> Vec<Advance> {
    let mut order: HashMap<String, usize> = HashMap::new();
    let mut advances: Vec<Advance> = Vec::new();
    for (command, effects) in batch.iter().zip(effects) {
        let id = command.session.to_string();
        let at = *order.entry(id.clone()).or_insert_with(|| {
            advances.push(Advance {
                id,
                count: 0,
                status: None,
            });
            advances.len() - 1
        });
        let advance = &mut advances[at];
        advance.count += command.entries.len() as i64;
        if effects.status.is_some() {
            advance.status = effects.status.clone();
        }
    }
    advances
}
