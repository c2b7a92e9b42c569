//! A [`Store`] whose event log writes nothing: the baseline of the token-latency figure.
//!
//! Its log keeps what the rest of Tandem relies on — sessions exist, seqs are allocated
//! without gaps, the status is derived from the events by Tandem's own
//! [`derive_effects`], guards hold — in a map behind a `std::sync::Mutex` (never held
//! across an `.await`), so the app runs the same path as on SQLite except for the log's
//! SQL. It keeps no events and no interrupts: a socket's backlog is always empty, and
//! answers are refused. A log writes its sessions' rows with their events, so this one
//! answers for them too ([`Sessions`], from the same map); every other record comes from
//! a SQLite store of its own ([`SqliteRecords`]), which the benchmark's path hardly
//! touches. Only for the benchmark.
//!
//! [`Store`]: tandem::store::Store

use std::collections::HashMap;
use std::sync::Mutex;

use shared::api::SessionStatus;
use tandem::domain::{SessionId, UserId};
use tandem::store::guards::{decide, Facts, GuardWrite, SessionFacts, Verdict};
use tandem::store::{
    derive_effects, Applied, Change, Command, EventLog, Found, NewBranch, RunLeases, SessionRow,
    Sessions, SqliteRecords, SqliteStore, StoreError, StoredEvent, Upkeep, DEFAULT_TITLE,
};

/// Sessions in memory, events nowhere, every other record in SQLite.
pub struct NoopStore {
    sessions: Mutex<HashMap<SessionId, SessionRow>>,
    records: SqliteStore,
}

impl NoopStore {
    /// A log that writes nothing, with the records `records` keeps.
    pub fn new(records: SqliteStore) -> Self {
        Self {
            sessions: Mutex::default(),
            records,
        }
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, SessionRow>> {
        self.sessions.lock().expect("no-op store lock poisoned")
    }
}

/// What the store knows of a command's session, for Tandem's own guard decisions (it keeps
/// no client message ids and no interrupts, so a repeat is not detected and every answer
/// finds its interrupt missing).
fn facts(row: Option<&SessionRow>) -> Facts {
    Facts {
        session: row.map(|row| SessionFacts {
            status: row.status,
            active_run_id: row.active_run_id.clone(),
        }),
        ..Facts::default()
    }
}

/// Every record but the session rows (users, share links, interrupts and queued messages,
/// the webhook outbox, attachments, feedback, budgets, instructions) is SQLite's, as it
/// would be on SQLite; this log writes none of them.
impl SqliteRecords for NoopStore {
    fn sqlite_records(&self) -> &SqliteStore {
        &self.records
    }
}

/// The only instance: every run is its own, so leases need no rows.
impl RunLeases for NoopStore {
    fn instance(&self) -> &str {
        "bench"
    }

    async fn release_leases(&self) -> Result<u64, StoreError> {
        Ok(0)
    }

    async fn renew_leases(&self, _now_ms: i64) -> Result<Vec<SessionId>, StoreError> {
        Ok(Vec::new())
    }

    async fn take_over_runs(
        &self,
        _now_ms: i64,
        _starting: bool,
    ) -> Result<Vec<SessionId>, StoreError> {
        Ok(Vec::new())
    }
}

impl EventLog for NoopStore {
    /// The benchmark makes no branches.
    async fn fork_session(&self, _: NewBranch<'_>) -> Result<Option<SessionRow>, StoreError> {
        Ok(None)
    }

    async fn create_session(
        &self,
        owner: UserId,
        id: SessionId,
        title: Option<&str>,
        now_ms: i64,
    ) -> Result<SessionRow, StoreError> {
        let row = SessionRow::created(id, owner, title.unwrap_or(DEFAULT_TITLE), now_ms);
        self.sessions().insert(id, row.clone());
        Ok(row)
    }

    async fn delete_session(&self, id: SessionId) -> Result<bool, StoreError> {
        Ok(self.sessions().remove(&id).is_some())
    }

    async fn events_after(
        &self,
        _id: SessionId,
        _after: u64,
        _limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        Ok(Vec::new())
    }

    /// Nothing else writes to this log.
    async fn changes(
        &self,
    ) -> Result<Option<tokio::sync::mpsc::UnboundedReceiver<Change>>, StoreError> {
        Ok(None)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    async fn apply(&self, batch: &[Command], now_ms: i64) -> Result<Vec<Applied>, StoreError> {
        let mut sessions = self.sessions();
        let outcomes = batch
            .iter()
            .map(|command| {
                let writes = match decide(command, &facts(sessions.get(&command.session))) {
                    Verdict::Refuse(rejection) => return Applied::Rejected(rejection),
                    Verdict::Proceed(writes) => writes,
                };
                let row = sessions.get_mut(&command.session).expect("decided above");
                for write in writes {
                    if let GuardWrite::NameSession { title } = write {
                        if row.title == DEFAULT_TITLE {
                            row.title = title;
                        }
                    }
                }
                let first_seq = row.last_seq + 1;
                row.last_seq += command.entries.len() as u64;
                row.updated_at = now_ms;
                if let Some((status, run_id)) = derive_effects(&command.entries).status {
                    row.status = status;
                    row.active_run_id = run_id;
                }
                Applied::Committed { first_seq }
            })
            .collect();
        Ok(outcomes)
    }

    /// Nothing is kept, so nothing needs upkeep.
    async fn log_upkeep(&self) -> Result<Upkeep, StoreError> {
        Ok(Upkeep::Done)
    }

    async fn settle_log(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// The rows of the sessions this log created, from its memory.
impl Sessions for NoopStore {
    async fn session(&self, id: SessionId) -> Result<Option<SessionRow>, StoreError> {
        Ok(self.sessions().get(&id).cloned())
    }

    async fn list_sessions(&self, owner: UserId) -> Result<Vec<SessionRow>, StoreError> {
        let mut rows: Vec<SessionRow> = self
            .sessions()
            .values()
            .filter(|row| row.owner == owner)
            .cloned()
            .collect();
        rows.sort_by_key(|row| std::cmp::Reverse(row.updated_at));
        Ok(rows)
    }

    async fn search_sessions(&self, owner: UserId, text: &str) -> Result<Vec<Found>, StoreError> {
        let mut rows = self.list_sessions(owner).await?;
        rows.retain(|row| row.title.contains(text));
        Ok(rows
            .into_iter()
            .map(|session| Found {
                session,
                message: None,
            })
            .collect())
    }

    /// It makes no branches, so a conversation is its first line.
    async fn conversation(&self, first: SessionId) -> Result<Vec<SessionRow>, StoreError> {
        Ok(self.sessions().get(&first).cloned().into_iter().collect())
    }

    async fn sessions_with_status(
        &self,
        status: SessionStatus,
    ) -> Result<Vec<SessionId>, StoreError> {
        let sessions = self.sessions();
        Ok(sessions
            .values()
            .filter(|row| row.status == status)
            .map(|row| row.id)
            .collect())
    }

    async fn rename_session(
        &self,
        id: SessionId,
        title: &str,
        _now_ms: i64,
    ) -> Result<bool, StoreError> {
        let mut sessions = self.sessions();
        let found = sessions.get_mut(&id);
        let renamed = found.is_some();
        if let Some(row) = found {
            row.title = title.to_string();
        }
        Ok(renamed)
    }

    async fn delete_idle_before(
        &self,
        cutoff_ms: i64,
        limit: u32,
    ) -> Result<Vec<SessionId>, StoreError> {
        let mut sessions = self.sessions();
        let gone: Vec<SessionId> = sessions
            .values()
            .filter(|row| row.status == SessionStatus::Idle && row.updated_at < cutoff_ms)
            .map(|row| row.id)
            .take(limit as usize)
            .collect();
        for id in &gone {
            sessions.remove(id);
        }
        Ok(gone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::{Event, EventBody};
    use tandem::store::{Guard, LogEntry, Rejection, StoreOptions, Users};

    /// A no-op log with its records in a fresh SQLite file (kept as long as the folder).
    async fn store() -> (NoopStore, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("records.db").display());
        let records = SqliteStore::connect(&url, &StoreOptions::default())
            .await
            .unwrap();
        (NoopStore::new(records), dir)
    }

    fn command(session: SessionId, guard: Guard, bodies: Vec<EventBody>) -> Command {
        let entries = bodies
            .into_iter()
            .map(|b| LogEntry::new(Event::at(b, 0)))
            .collect();
        Command {
            session,
            guard,
            entries,
            state: None,
        }
    }

    #[tokio::test]
    async fn seqs_are_contiguous_and_status_follows_the_events() {
        let (store, _dir) = store().await;
        let id = SessionId::generate();
        store
            .create_session(UserId::LOCAL, id, None, 0)
            .await
            .unwrap();
        let start = EventBody::RunStarted {
            thread_id: id.to_string(),
            run_id: "r".into(),
            parent_run_id: None,
            input: None,
        };
        let guard = Guard::StartRun {
            run_id: "r".into(),
            client_message_id: None,
            title: "t".into(),
            queued: None,
            fire: None,
        };
        let first = command(id, guard.clone(), vec![start.clone(), start]);
        let applied = store.apply(&[first.clone(), first], 1).await.unwrap();
        assert_eq!(applied[0], Applied::Committed { first_seq: 1 });
        assert!(matches!(applied[1], Applied::Rejected(Rejection::Busy(_))));
        let text = EventBody::TextMessageContent {
            message_id: "m".into(),
            delta: "x".into(),
        };
        let next = command(id, Guard::Append, vec![text]);
        let applied = store.apply(&[next], 2).await.unwrap();
        assert_eq!(applied[0], Applied::Committed { first_seq: 3 });
        let row = store.session(id).await.unwrap().unwrap();
        assert_eq!((row.status, row.last_seq), (SessionStatus::Running, 3));
    }

    #[tokio::test]
    async fn its_records_are_sqlite_s() {
        let (store, _dir) = store().await;
        let local = store.user(UserId::LOCAL).await.unwrap().unwrap();
        assert_eq!(local.name.as_str(), "local");
        assert_eq!(store.list_users().await.unwrap(), vec![local]);
    }
}
