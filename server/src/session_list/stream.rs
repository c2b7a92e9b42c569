//! One page's session list as Server-Sent Events: a snapshot, then each change.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actix_web::web::Bytes;
use shared::api::{SessionListEvent, SessionSummary};

use super::{ListNotice, ListWatch};
use crate::domain::{SessionId, UserId};
use crate::limits::SocketSlot;
use crate::standing::Standing;
use crate::state::AppState;
use crate::store::{SessionRow, Store, StoreError};

/// How long the stream stays silent before it sends a comment, so proxies keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How long a browser waits before it connects again after the stream drops (SSE's
/// `retry:`); the new stream starts with a snapshot, so nothing is lost meanwhile.
const RECONNECT_MS: u32 = 1_000;

/// Where one list's stream stands.
pub struct ListStream<S> {
    state: Arc<AppState<S>>,
    owner: UserId,
    watch: ListWatch,
    /// The caller's credential, which the stream lives no longer than.
    standing: Standing,
    /// The sessions this list has told of, each as last told: a change that leaves a row
    /// as told is not told again (the notice of a change the snapshot already read may
    /// arrive after it), and a branch's deletion may bring another line of its
    /// conversation back into the list, so the list is read again.
    listed: HashMap<SessionId, SessionSummary>,
    /// A snapshot is owed: the stream is new, or changes may have been missed.
    reload: bool,
    started: bool,
    done: bool,
    /// Its place among the caller's open sockets and streams.
    _slot: SocketSlot,
}

impl<S: Store> ListStream<S> {
    /// A stream of `owner`'s list; `watch` was taken before anything is read, so no change
    /// committed after the snapshot's read can be missed.
    pub fn new(
        state: Arc<AppState<S>>,
        owner: UserId,
        watch: ListWatch,
        standing: Standing,
        slot: SocketSlot,
    ) -> Self {
        Self {
            state,
            owner,
            watch,
            standing,
            listed: HashMap::new(),
            reload: true,
            started: false,
            done: false,
            _slot: slot,
        }
    }

    /// The next part of the response body: SSE messages or a keep-alive comment; `None`
    /// once the stream ends (its credential ended, the process stops, the list cannot be
    /// read).
    pub async fn next_chunk(&mut self) -> Option<Bytes> {
        if self.done {
            return None;
        }
        let mut out = String::new();
        if !self.started {
            self.started = true;
            out.push_str(&format!("retry: {RECONNECT_MS}\n\n"));
        }
        loop {
            if self.reload {
                self.reload = false;
                if let Err(error) = self.snapshot(&mut out).await {
                    tracing::error!(%error, "cannot read a session list for its stream");
                    self.done = true;
                    return None;
                }
                return Some(Bytes::from(out));
            }
            let halting = self.state.lifecycle.halting().clone();
            let notice = tokio::select! {
                notice = self.watch.recv() => notice,
                _ = tokio::time::sleep(KEEP_ALIVE) => return Some(Bytes::from_static(b": keep-alive\n\n")),
                ended = self.standing.ended() => {
                    tracing::info!(reason = ?ended.description, "a session list's stream ended: its credential did");
                    self.done = true;
                    return None;
                }
                _ = halting.cancelled() => {
                    self.done = true;
                    return None;
                }
            };
            let Some(first) = notice else {
                self.done = true;
                return None;
            };
            // Everything already waiting goes out in one chunk.
            let mut next = Some(first);
            while let Some(notice) = next.take() {
                if let Err(error) = self.take(notice, &mut out).await {
                    tracing::warn!(%error, "cannot read a listed session; reading the list again");
                    self.reload = true;
                }
                next = self.watch.try_recv();
            }
            if self.reload {
                continue;
            }
            if !out.is_empty() {
                return Some(Bytes::from(out));
            }
        }
    }

    /// Sends the whole list.
    async fn snapshot(&mut self, out: &mut String) -> Result<(), StoreError> {
        let rows = self.state.store.list_sessions(self.owner).await?;
        let told: Vec<(SessionId, SessionSummary)> =
            rows.into_iter().map(|row| (row.id, summary(row))).collect();
        self.listed = told.iter().cloned().collect();
        let sessions = told.into_iter().map(|(_, session)| session).collect();
        push(out, &SessionListEvent::Snapshot { sessions });
        Ok(())
    }

    /// Acts on one notice: reads a changed row, tells a deletion of a listed session.
    async fn take(&mut self, notice: ListNotice, out: &mut String) -> Result<(), StoreError> {
        match notice {
            ListNotice::Reload => self.reload = true,
            ListNotice::Changed(id) => match self.state.store.session(id).await? {
                // A replay's trial changes nothing of its conversation's row.
                Some(row)
                    if row.owner == self.owner
                        && !self.listed.contains_key(&id)
                        && self.state.store.is_trial(&id.to_string()).await? => {}
                Some(row) if row.owner == self.owner => {
                    let session = summary(row);
                    if self.listed.get(&id) != Some(&session) {
                        self.listed.insert(id, session.clone());
                        push(out, &SessionListEvent::Changed { session });
                    }
                }
                _ => self.removed(id, out),
            },
            ListNotice::Removed(id) => self.removed(id, out),
        }
        Ok(())
    }

    fn removed(&mut self, id: SessionId, out: &mut String) {
        match self.listed.remove(&id) {
            Some(told) if told.parent_id.is_some() => self.reload = true,
            Some(_) => {
                let id = id.to_string();
                push(out, &SessionListEvent::Removed { id });
            }
            None => {}
        }
    }
}

/// One SSE message.
fn push(out: &mut String, event: &SessionListEvent) {
    out.push_str("data: ");
    out.push_str(&serde_json::to_string(event).expect("list events serialise"));
    out.push_str("\n\n");
}

/// The summary of a session row, as every endpoint returns it.
pub fn summary(row: SessionRow) -> SessionSummary {
    SessionSummary {
        id: row.id.to_string(),
        title: row.title,
        status: row.status,
        last_seq: row.last_seq,
        created_at: row.created_at,
        updated_at: row.updated_at,
        parent_id: row.fork.map(|fork| fork.parent.to_string()),
        fork_seq: row.fork.map(|fork| fork.at_seq),
        conversation_id: row.conversation.to_string(),
        snippet: None,
    }
}
