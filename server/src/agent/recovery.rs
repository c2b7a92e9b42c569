//! Start-up repair of runs a dead process left in flight.
//!
//! A session still `running` at start has no task anywhere: its last run is closed in the
//! log (open messages, reasoning, tool calls and steps, with error results for tool calls
//! that never finished) and ends with `RUN_ERROR` code `interrupted`, so the log stays
//! valid and the session usable. Paused sessions need nothing: they are rows.

use shared::api::SessionStatus;
use shared::{Event, EventBody};

use super::open_items::OpenItems;
use super::runner::Runner;
use crate::domain::{now_ms, SessionId};
use crate::eventlog::WriteError;
use crate::store::{Command, Guard, LogEntry, Store, StoreError};

/// The result text of a tool call the crash cut short.
const CUT_SHORT: &str = "Tandem stopped while this call was running; its outcome is unknown";

impl<S: Store> Runner<S> {
    /// Closes every run left in flight; returns how many were closed.
    pub async fn close_interrupted_runs(&self) -> Result<usize, WriteError> {
        let sessions = self
            .deps
            .store
            .sessions_with_status(SessionStatus::Running)
            .await?;
        for &session in &sessions {
            let closing = self.closing_events(session).await?;
            let now = now_ms();
            let entries = closing
                .into_iter()
                .map(|b| LogEntry::new(Event::at(b, now)))
                .collect();
            let command = Command {
                session,
                guard: Guard::Append,
                entries,
            };
            self.deps.writer.submit(command).await?;
            tracing::info!(%session, "closed a run interrupted by the last shutdown");
        }
        Ok(sessions.len())
    }

    async fn closing_events(&self, session: SessionId) -> Result<Vec<EventBody>, StoreError> {
        let stored = self.deps.store.events_after(session, 0, u32::MAX).await?;
        let mut open = OpenItems::default();
        for row in &stored {
            match serde_json::from_str::<Event>(&row.json) {
                Ok(event) => open.observe(&event.body),
                Err(error) => tracing::warn!(%session, seq = row.seq, %error, "unreadable event"),
            }
        }
        let mut events = open.closing_all(CUT_SHORT);
        events.push(EventBody::RunError {
            message: "Tandem stopped while this run was in flight; it was closed at restart. \
                      Send a message to continue."
                .into(),
            code: Some("interrupted".into()),
        });
        Ok(events)
    }
}
