//! What the SQLite store's unit tests share: a store on a temporary file and a command
//! appending text deltas.

use shared::{Event, EventBody};

use super::SqliteStore;
use crate::domain::SessionId;
use crate::store::{Command, Guard, LogEntry};

/// A migrated store on a fresh file; keep the directory alive as long as the store.
pub async fn temp_store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    (dir, store)
}

/// A store on the file [`temp_store`] made in `dir` (another process's view of it, say).
pub async fn open_store(dir: &std::path::Path) -> SqliteStore {
    let url = format!("sqlite://{}", dir.join("t.db").display());
    SqliteStore::connect(&url, &Default::default())
        .await
        .unwrap()
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
        state: None,
    }
}
