//! Interrupt deadlines, enforced by the server.
//!
//! A sweeper task looks for pending interrupts past their `expiresAt` every
//! [`SWEEP_EVERY`] and expires them: the answer is recorded as `expired` under the same
//! `Resume` guard as a person's answer (so exactly one of them wins), the model receives a
//! tool result saying the person did not answer in time, and the run continues. Deadlines
//! live in rows, so expiry also happens for interrupts that ran out while Tandem was down.

use std::time::Duration;

use serde_json::json;
use shared::{EventBody, ToolRole};

use super::Runner;
use crate::agent::refusal::Refusal;
use crate::agent::run::approval::{self, Approval};
use crate::agent::run::client_tools;
use crate::domain::{deadline_ms, new_id, now_ms};
use crate::store::{Guard, InterruptRow, Store};

/// How often the sweeper looks for expired interrupts.
pub const SWEEP_EVERY: Duration = Duration::from_millis(200);
/// Interrupts expired per sweep at most (the rest wait for the next sweep).
const SWEEP_BATCH: u32 = 200;
/// What the model reads for an unanswered question or approval.
const NO_ANSWER: &str = "the person did not answer before the deadline";
/// What the model reads for a client's tool call that got no result.
const NO_RESULT: &str = "the client did not return a result before the deadline";

/// Whether an interrupt's deadline has passed.
pub fn is_due(row: &InterruptRow) -> bool {
    deadline_ms(&row.interrupt).is_some_and(|deadline| deadline <= now_ms())
}

/// Expiring interrupts whose deadline passed (a view of the [`Runner`]).
pub struct Expiry<'a, S> {
    pub(super) runner: &'a Runner<S>,
}

impl<S: Store> Expiry<'_, S> {
    /// Expires a pending interrupt and continues its run. Losing the race to an answer
    /// is fine: the interrupt is settled either way.
    pub async fn expire(&self, row: &InterruptRow) -> Result<(), Refusal> {
        let session = row.session_id;
        // The run goes on in its owner's line for a slot, like an answered one.
        let Some(owner) = self
            .runner
            .deps
            .store
            .session(session)
            .await?
            .map(|s| s.owner)
        else {
            return Ok(());
        };
        let run_id = new_id("run");
        let mut events = vec![self.runner.run_started(session, &run_id)];
        events.extend(expiry_events(row));
        let guard = Guard::Resume {
            interrupt_id: row.id.clone(),
            response: json!({"status": "expired"}),
            run_id: run_id.clone(),
        };
        match self
            .runner
            .start(session, owner, run_id.clone(), guard, events)
            .await
        {
            Ok(_) => {
                crate::metrics::METRICS.answered("expired");
                tracing::info!(%session, run = run_id, interrupt = row.id, "interrupt expired; the run goes on");
                Ok(())
            }
            Err(Refusal::InterruptAnswered(_) | Refusal::InterruptExpired(_)) => Ok(()),
            Err(Refusal::SessionNotFound(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Starts the sweeper, which ends when the process stops.
    pub fn spawn_sweeper(runner: Runner<S>) {
        let lifecycle = runner.deps.lifecycle.clone();
        lifecycle.spawn(async move {
            let mut tick = crate::lifecycle::steady_interval(SWEEP_EVERY);
            loop {
                tokio::select! {
                    _ = runner.deps.lifecycle.halting().cancelled() => return,
                    _ = tick.tick() => {}
                }
                if let Err(error) = (Expiry { runner: &runner }).sweep().await {
                    tracing::warn!(%error, "expiring interrupts failed; retrying next sweep");
                }
            }
        });
    }

    async fn sweep(&self) -> Result<(), Refusal> {
        let due = self
            .runner
            .deps
            .store
            .expired_interrupts(now_ms(), SWEEP_BATCH)
            .await?;
        for row in &due {
            self.expire(row).await?;
        }
        Ok(())
    }
}

/// The events that record an expiry: the tool result, and for an approval the
/// decision (rejected) the page shows.
fn expiry_events(row: &InterruptRow) -> Vec<EventBody> {
    if row.interrupt.reason == client_tools::REASON {
        return client_tools::expired(&row.interrupt, NO_RESULT);
    }
    let mut events = Vec::new();
    let content = if row.interrupt.reason == approval::REASON {
        let decision = Approval {
            interrupt_id: row.id.clone(),
            tool_call_id: row.tool_call_id.clone(),
            approved: false,
            reason: Some(NO_ANSWER.into()),
            arguments: None,
        };
        events.push(decision.to_event());
        json!({"status": "expired", "error": format!("{NO_ANSWER}; the call did not run")})
    } else {
        json!({"status": "expired", "error": NO_ANSWER})
    };
    events.push(EventBody::ToolCallResult {
        message_id: new_id("msg"),
        tool_call_id: row.tool_call_id.clone(),
        content: content.to_string(),
        role: Some(ToolRole::Tool),
    });
    events
}
