//! A [`Store`] that writes nothing: the baseline of the token-latency figure.
//!
//! It keeps what the rest of Tandem relies on — sessions exist, seqs are allocated
//! without gaps, the status is derived from the events by Tandem's own
//! [`derive_effects`], guards hold — in a map behind a `std::sync::Mutex` (never held
//! across an `.await`), so the app runs the same path as on SQLite except for SQL. It
//! keeps no events and no interrupts: a socket's backlog is always empty, and answers are
//! refused. It knows only the `local` user (the benchmark runs with `--auth none`). Only
//! for the benchmark.

use std::collections::HashMap;
use std::sync::Mutex;

use shared::api::SessionStatus;
use tandem::domain::{SessionId, TokenHash, UserId, UserName};
use tandem::store::guards::{decide, Facts, GuardWrite, SessionFacts, Verdict};
use tandem::store::{
    derive_effects, Applied, Command, EventLog, Fork, Found, InterruptRow, QueuedRow, Records,
    SessionRow, ShareRow, StoreError, StoredEvent, UserRow, DEFAULT_TITLE,
};

/// Sessions in memory, events nowhere.
#[derive(Default)]
pub struct NoopStore {
    sessions: Mutex<HashMap<SessionId, SessionRow>>,
}

impl NoopStore {
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

/// The one user the no-op store knows.
fn local() -> UserRow {
    UserRow {
        id: UserId::LOCAL,
        name: UserName::parse_any(UserName::LOCAL).expect("a valid name"),
        created_at: 0,
        revoked_at: None,
    }
}

impl tandem::store::WebhookOutbox for NoopStore {}

impl tandem::store::Attachments for NoopStore {}

impl tandem::store::FeedbackReads for NoopStore {}
impl tandem::store::Budgets for NoopStore {}

/// Nobody's instructions: the benchmark's runs are told none.
impl tandem::store::Instructions for NoopStore {
    async fn user_instructions(&self, _user: UserId) -> Result<String, StoreError> {
        Ok(String::new())
    }

    async fn set_user_instructions(
        &self,
        _user: UserId,
        _text: &str,
        _now_ms: i64,
    ) -> Result<(), StoreError> {
        Ok(())
    }
}

impl EventLog for NoopStore {
    /// The benchmark makes no branches.
    async fn fork_session(
        &self,
        _id: SessionId,
        _fork: Fork,
        _waiting: Option<&str>,
        _title: Option<&str>,
        _now_ms: i64,
    ) -> Result<Option<SessionRow>, StoreError> {
        Ok(None)
    }

    async fn create_session(
        &self,
        owner: UserId,
        id: SessionId,
        title: Option<&str>,
        now_ms: i64,
    ) -> Result<SessionRow, StoreError> {
        let row = SessionRow {
            id,
            owner,
            title: title.unwrap_or(DEFAULT_TITLE).to_string(),
            status: SessionStatus::Idle,
            active_run_id: None,
            last_seq: 0,
            created_at: now_ms,
            updated_at: now_ms,
            fork: None,
            conversation: id,
        };
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

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// The only instance: every run is its own, so leases need no rows.
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
}

impl Records for NoopStore {
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

    async fn conversation(&self, first: SessionId) -> Result<Vec<SessionRow>, StoreError> {
        Ok(self.sessions().get(&first).cloned().into_iter().collect())
    }

    async fn create_share(&self, _share: &ShareRow, _token: TokenHash) -> Result<(), StoreError> {
        Ok(())
    }

    async fn shares(&self, _session: SessionId) -> Result<Vec<ShareRow>, StoreError> {
        Ok(Vec::new())
    }

    async fn delete_share(&self, _session: SessionId, _id: &str) -> Result<bool, StoreError> {
        Ok(false)
    }

    async fn share_for_token(
        &self,
        _token: TokenHash,
    ) -> Result<Option<(ShareRow, TokenHash)>, StoreError> {
        Ok(None)
    }

    async fn session(&self, id: SessionId) -> Result<Option<SessionRow>, StoreError> {
        Ok(self.sessions().get(&id).cloned())
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

    async fn interrupt(
        &self,
        _session: SessionId,
        _interrupt_id: &str,
    ) -> Result<Option<InterruptRow>, StoreError> {
        Ok(None)
    }

    async fn pending_interrupts(
        &self,
        _session: SessionId,
    ) -> Result<Vec<InterruptRow>, StoreError> {
        Ok(Vec::new())
    }

    async fn queued_messages(&self, _session: SessionId) -> Result<Vec<QueuedRow>, StoreError> {
        Ok(Vec::new())
    }

    async fn idle_with_queue(&self) -> Result<Vec<SessionId>, StoreError> {
        Ok(Vec::new())
    }

    async fn expired_interrupts(
        &self,
        _now_ms: i64,
        _limit: u32,
    ) -> Result<Vec<InterruptRow>, StoreError> {
        Ok(Vec::new())
    }

    async fn delete_idle_before(
        &self,
        _cutoff_ms: i64,
        _limit: u32,
    ) -> Result<Vec<SessionId>, StoreError> {
        Ok(Vec::new())
    }

    async fn create_user(
        &self,
        _id: UserId,
        _name: &UserName,
        _token: TokenHash,
        _now_ms: i64,
    ) -> Result<bool, StoreError> {
        Ok(false)
    }

    async fn user(&self, id: UserId) -> Result<Option<UserRow>, StoreError> {
        Ok((id == UserId::LOCAL).then(local))
    }

    async fn list_users(&self) -> Result<Vec<UserRow>, StoreError> {
        Ok(vec![local()])
    }

    async fn revoke_user(&self, _name: &UserName, _now_ms: i64) -> Result<bool, StoreError> {
        Ok(false)
    }

    async fn user_for_token(
        &self,
        _token: TokenHash,
    ) -> Result<Option<(UserRow, TokenHash)>, StoreError> {
        Ok(None)
    }

    async fn create_sign_in(
        &self,
        _cookie: TokenHash,
        _user: UserId,
        _now_ms: i64,
        _expires_at_ms: i64,
    ) -> Result<(), StoreError> {
        Ok(())
    }

    async fn user_for_sign_in(
        &self,
        _cookie: TokenHash,
        _now_ms: i64,
    ) -> Result<Option<tandem::store::SignInMatch>, StoreError> {
        Ok(None)
    }

    async fn delete_sign_in(&self, _cookie: TokenHash) -> Result<bool, StoreError> {
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::{Event, EventBody};
    use tandem::store::{Guard, LogEntry, Rejection};

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
        let store = NoopStore::default();
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
}
