//! Sending one scheduled time's message, as its owner's message, by the schedule's
//! `overlap`: the fire is recorded by the guard of the transaction that starts its run
//! (or queues its message), so a time that already fired is refused there and nothing is
//! sent twice. What cannot be sent is recorded as skipped, with why.

use shared::api::SessionStatus;
use shared::queue::WhileRunning;
use shared::schedules::Overlap;

use super::spec::Spec;
use super::Scheduler;
use crate::agent::{NewMessage, Refusal};
use crate::domain::SessionId;
use crate::store::{FireClaim, FireRow, ScheduleRow, Store};

/// A fire that sent nothing: `missed` or `skipped`, and why.
pub(super) fn unsent(
    row: &ScheduleRow,
    time: i64,
    status: &str,
    reason: String,
    manual: bool,
) -> FireRow {
    FireRow {
        schedule_id: row.id.clone(),
        scheduled_for: time,
        status: status.to_string(),
        fired_at: None,
        session_id: None,
        run_id: None,
        outcome: None,
        reason: Some(reason),
        manual,
    }
}

/// One scheduled time of one schedule, about to be sent.
pub(super) struct Fire<'a, S> {
    scheduler: &'a Scheduler<S>,
    row: &'a ScheduleRow,
    spec: &'a Spec,
    time: i64,
    manual: bool,
}

impl<'a, S: Store> Fire<'a, S> {
    pub(super) fn new(
        scheduler: &'a Scheduler<S>,
        row: &'a ScheduleRow,
        spec: &'a Spec,
        time: i64,
        manual: bool,
    ) -> Self {
        Self {
            scheduler,
            row,
            spec,
            time,
            manual,
        }
    }

    /// Sends it (or records why not). An error only when storage failed: the time is
    /// then tried again, and whatever committed is not sent twice.
    pub(super) async fn send(self) -> Result<(), Refusal> {
        let store = &*self.scheduler.store;
        let runner = &self.scheduler.runner;
        // What the previous fire left running or waiting (a fixed session: whatever it
        // does now).
        let previous = match self.spec.session {
            Some(session) => Some(session),
            None => store
                .last_fired(&self.row.id)
                .await?
                .and_then(|fire| SessionId::parse(fire.session_id.as_deref()?).ok()),
        };
        let busy = match previous {
            Some(session) => store
                .session(session)
                .await?
                .filter(|row| row.owner == self.row.owner)
                .map(|row| row.status != SessionStatus::Idle),
            None => Some(false),
        };
        let Some(busy) = busy.or(self.spec.session.is_none().then_some(false)) else {
            return self.skip("the schedule's session was deleted".into()).await;
        };
        let mode = match (busy, self.spec.overlap) {
            (false, _) => WhileRunning::Reject,
            (true, Overlap::Skip) => {
                let reason =
                    "the previous fire's run still runs or waits for its person (overlap `skip`)";
                return self.skip(reason.into()).await;
            }
            (true, Overlap::Queue) => WhileRunning::Queue,
            (true, Overlap::Cancel) if self.spec.session.is_some() => WhileRunning::Interrupt,
            (true, Overlap::Cancel) => {
                // Busy means a previous session was read: it is the one stopped.
                if let Some(previous) = previous {
                    match runner.cancel(previous).await {
                        Ok(()) | Err(Refusal::Idle) => {}
                        Err(error) => return Err(error),
                    }
                }
                WhileRunning::Reject
            }
        };
        let (session, made) = match self.spec.session {
            Some(session) => (session, false),
            None => {
                let session = SessionId::of_fire(&self.row.id, self.time);
                let title = self.spec.title_at(self.time);
                runner
                    .create_or_find(self.row.owner, session, &title)
                    .await?;
                (session, true)
            }
        };
        let ids = &self.spec.input.message.attachments;
        let attachments = match runner.attachments(session, ids).await {
            Ok(attachments) => attachments,
            Err(Refusal::Store(error)) => return Err(Refusal::Store(error)),
            Err(refusal) => return self.skip_in(session, made, refusal.to_string()).await,
        };
        let message = NewMessage {
            text: self.spec.input.message.text.clone(),
            model: self.spec.input.model.clone(),
            while_running: Some(mode),
            attachments,
            fire: Some(FireClaim {
                schedule_id: self.row.id.clone(),
                scheduled_for: self.time,
                fired_at: self.scheduler.clock.now_ms(),
                manual: self.manual,
            }),
            ..NewMessage::default()
        };
        match runner.post_message(session, self.row.owner, message).await {
            Ok(accepted) => {
                tracing::info!(schedule = self.row.id, %session, run = accepted.run_id, "a schedule fired");
                Ok(())
            }
            // Another instance (or this one before a crash) sent it.
            Err(Refusal::AlreadyFired) => Ok(()),
            Err(error @ (Refusal::Store(_) | Refusal::Write(_))) => Err(error),
            Err(Refusal::Busy(status)) => {
                let reason = format!("the session was {} (overlap `skip`)", busy_words(status));
                self.skip_in(session, made, reason).await
            }
            Err(refusal) => self.skip_in(session, made, refusal.to_string()).await,
        }
    }

    async fn skip(&self, reason: String) -> Result<(), Refusal> {
        let skipped = unsent(self.row, self.time, "skipped", reason, self.manual);
        self.scheduler.store.record_fire(&skipped).await?;
        Ok(())
    }

    /// Skips a time whose session is `session`; one made for it (`made`) goes again, so
    /// nothing is left of a fire that sent nothing, unless another fire of the same time
    /// (another instance's) holds it.
    async fn skip_in(&self, session: SessionId, made: bool, reason: String) -> Result<(), Refusal> {
        let skipped = unsent(self.row, self.time, "skipped", reason, self.manual);
        let recorded = self.scheduler.store.record_fire(&skipped).await?;
        if made && recorded {
            if let Err(error) = self.scheduler.runner.delete(session).await {
                tracing::warn!(%error, %session, "could not delete a skipped fire's session");
            }
        }
        Ok(())
    }
}

fn busy_words(status: SessionStatus) -> &'static str {
    match status {
        SessionStatus::AwaitingInput => "waiting for its person",
        _ => "running",
    }
}
