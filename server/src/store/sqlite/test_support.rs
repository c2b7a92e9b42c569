//! What the SQLite store's unit tests share: a store on a temporary file and a command
//! appending text deltas.

use shared::{Event, EventBody};

use super::SqliteStore;
use crate::domain::SessionId;
use crate::store::{Command, Guard, LogEntry};

/// A migrated store on a fresh file; keep the directory alive as long as the store.
pub async fn temp_store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let store = SqliteStore::connect(&url, &Default::default())
        .await
        .unwrap();
    (dir, store)
}

/// An `Append` of one `TEXT_MESSAGE_CONTENT` per delta.
pub fn append(session: SessionId, deltas: &[&str]) -> Command {
    let entries = deltas
        .iter()
        .map(|delta| {
            let body = EventBody::TextMessageContent {
                message_id: "m".into(),
                delta: (*delta).into(),
            };
            LogEntry::new(Event::at(body, 0))
        })
        .collect();
    Command {
        session,
        guard: Guard::Append,
        entries,
    }
}
