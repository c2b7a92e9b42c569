//! Recovery of runs nobody executes any more: left in flight by a dead process, or by an
//! instance whose run lease lapsed (see `store/leases.rs`).
//!
//! Such a session is `running` with no task anywhere. This instance takes its lease over
//! (a new epoch, so the old holder is fenced off). Its run is repaired in the
//! log and then continues by itself: open text and reasoning are closed, a tool call the
//! model was still writing is closed with an error result, a tool call that was running
//! is left to run again if the tool is idempotent and otherwise gets a result saying its
//! outcome is unknown, and a `CUSTOM tandem.run_recovered` marker precedes the
//! continuation. A run with a persisted stop request is finished as cancelled instead,
//! and one that crashed [`MAX_RECOVERIES`] times ends with `RUN_ERROR recovery_limit`.

use serde_json::json;
use shared::api::SessionStatus;
use shared::{Event, EventBody, Outcome, ToolRole};

use super::Runner;
use crate::agent::conversation::MODEL_CALL_STEP;
use crate::agent::run::halt::{STOPPED, STOP_EVENT};
use crate::agent::run::open_items::OpenItems;
use crate::agent::tools::ToolRegistry;
use crate::domain::{new_id, now_ms};
use crate::eventlog::WriteError;
use crate::store::{Applied, Command, Guard, LogEntry, Rejection, Store, StoredEvent};

/// How many times one run is continued after a crash before it fails.
pub const MAX_RECOVERIES: u64 = 3;
/// How many times a repair is computed again because the log moved under it: only
/// appends the last holder began before the takeover can move it, one per log writer.
const REPAIR_ATTEMPTS: u32 = 8;
/// The marker before a recovered run's continuation.
pub const RECOVERED_EVENT: &str = shared::custom::RUN_RECOVERED;
/// The result of a call cut off while the model was still writing it.
const CUT_OFF: &str = "the model was still writing this call when Tandem stopped; it did not run";
/// The result of a call that was running and may not run twice.
const UNKNOWN: &str = "Tandem stopped while this call was running; its outcome is unknown and \
                       it was not run again because running it twice is not safe";

/// What to append for a run found in flight, and whether it then continues.
#[derive(Debug, PartialEq)]
pub struct Repair {
    pub events: Vec<EventBody>,
    /// The run to continue, if it does.
    pub continue_run: Option<String>,
}

/// Taking over and continuing runs nobody executes any more (a view of the [`Runner`]).
pub struct Recovery<'a, S> {
    pub(super) runner: &'a Runner<S>,
}

impl<S: Store> Runner<S> {
    /// Taking over runs nobody executes any more.
    pub fn recovery(&self) -> Recovery<'_, S> {
        Recovery { runner: self }
    }
}

impl<S: Store> Recovery<'_, S> {
    /// Takes over the runs nobody executes any more (left in flight by a dead process,
    /// or by an instance whose lease lapsed), repairs them and continues those that may,
    /// then starts the queued messages nothing takes; returns how many runs were taken
    /// over. `starting`: this process has just started.
    pub async fn recover_interrupted_runs(&self, starting: bool) -> Result<usize, WriteError> {
        let taken = self.take_over_runs(starting).await?;
        if let Err(error) = self.runner.start_waiting_queues().await {
            tracing::warn!(%error, "could not start the queued messages nothing took");
        }
        Ok(taken)
    }

    async fn take_over_runs(&self, starting: bool) -> Result<usize, WriteError> {
        let store = &self.runner.deps.store;
        let taken = store.take_over_runs(now_ms(), starting).await?;
        if taken.is_empty() {
            return Ok(0);
        }
        // In the order the sessions last changed, so queued runs keep their places in
        // their owners' lines.
        let running = store.sessions_with_status(SessionStatus::Running).await?;
        let mut order: Vec<_> = running.into_iter().filter(|s| taken.contains(s)).collect();
        let rest: Vec<_> = taken
            .iter()
            .filter(|s| !order.contains(s))
            .copied()
            .collect();
        order.extend(rest);
        for &session in &order {
            // A run of ours whose lease lapsed and came back to us goes on as it is.
            if self.runner.runs_here(session) {
                continue;
            }
            self.recover(session).await?;
        }
        Ok(order.len())
    }

    /// Repairs the last run of a session taken over, then continues it if it may. The
    /// repair goes in only right after the events it was computed from
    /// ([`Guard::Repair`]): an append the last holder began before the takeover may still
    /// land, and then the repair is computed again from the longer log.
    async fn recover(&self, session: crate::domain::SessionId) -> Result<(), WriteError> {
        let mut attempt = 1;
        // Whether a cut call may run again is its tool's to say: a person's own tool's too.
        let deps = &self.runner.deps;
        let tools = match deps.store.session(session).await? {
            Some(row) => deps.tools_of(row.owner).await,
            None => deps.tools.clone(),
        };
        let continue_run = loop {
            let stored = deps.store.events_after(session, 0, u32::MAX).await?;
            let after_seq = stored.last().map_or(0, |event| event.seq);
            let Repair {
                events,
                continue_run,
            } = repair(&StoredEvent::parse_all(&stored), &tools);
            if events.is_empty() {
                break continue_run;
            }
            let now = now_ms();
            let entries = events
                .into_iter()
                .map(|body| LogEntry::new(Event::at(body, now)))
                .collect();
            let command = Command {
                session,
                guard: Guard::Repair { after_seq },
                entries,
                state: None,
            };
            match self.runner.deps.writer.submit(command).await? {
                Applied::Committed { .. } => break continue_run,
                Applied::Rejected(Rejection::LogMoved) if attempt < REPAIR_ATTEMPTS => {
                    tracing::debug!(%session, after_seq, attempt, "the log moved under a repair; repairing again");
                    attempt += 1;
                }
                Applied::Rejected(rejection) => {
                    tracing::warn!(%session, ?rejection, "a run taken over was not repaired");
                    return Ok(());
                }
            }
        };
        match continue_run {
            Some(run_id) => {
                // The run waits for a slot in its owner's line, like a new one.
                let Some(row) = self.runner.deps.store.session(session).await? else {
                    tracing::debug!(%session, "session deleted while it was recovered");
                    return Ok(());
                };
                tracing::warn!(%session, run = run_id, "continuing a run nobody else executes");
                self.runner.continue_run(session, row.owner, run_id);
            }
            None => tracing::warn!(%session, "closed a run nobody else executes"),
        }
        Ok(())
    }

    /// Keeps this instance's run leases alive and takes over lapsed ones, every `every`
    /// (a third of the lease) and whenever another instance hands its runs back, until
    /// the process stops.
    pub fn spawn_lease_keeper(runner: Runner<S>, every: std::time::Duration) {
        let lifecycle = runner.deps.lifecycle.clone();
        let runtime = runner.deps.runtime.clone();
        let task = async move {
            let mut beat = crate::lifecycle::steady_interval(every);
            beat.tick().await;
            loop {
                tokio::select! {
                    _ = runner.deps.lifecycle.halting().cancelled() => return,
                    _ = beat.tick() => {}
                    _ = runner.deps.released_elsewhere.notified() => {}
                }
                if let Err(error) = runner.deps.store.renew_leases(now_ms()).await {
                    tracing::warn!(%error, "could not renew run leases");
                }
                if let Err(error) = (Recovery { runner: &runner })
                    .recover_interrupted_runs(false)
                    .await
                {
                    tracing::warn!(%error, "could not take over lapsed runs");
                }
            }
        };
        lifecycle.spawn_on(task, &runtime);
    }
}

/// Decides how to repair the last run of a session's log.
pub fn repair(events: &[Event], tools: &ToolRegistry) -> Repair {
    if let Some(run_id) = waiting_for_slot(events) {
        // Nothing ran yet: it simply takes its place in the queue again.
        return Repair {
            events: Vec::new(),
            continue_run: Some(run_id),
        };
    }
    let mut open = OpenItems::default();
    let (mut run_id, mut attempts, mut stopped) = (String::new(), 0, false);
    let mut names = std::collections::HashMap::new();
    for event in events {
        open.observe(&event.body);
        match &event.body {
            EventBody::RunStarted { run_id: id, .. } => {
                (run_id, attempts, stopped) = (id.clone(), 0, false);
            }
            EventBody::Custom { name, .. } if name == RECOVERED_EVENT => attempts += 1,
            EventBody::Custom { name, .. } if name == STOP_EVENT => stopped = true,
            EventBody::ToolCallStart {
                tool_call_id,
                tool_call_name,
                ..
            } => {
                names.insert(tool_call_id.clone(), tool_call_name.clone());
            }
            _ => {}
        }
    }
    let thread_id = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::RunStarted { thread_id, .. } => Some(thread_id.clone()),
            _ => None,
        })
        .unwrap_or_default();
    if stopped {
        let mut closing = open.closing_all(STOPPED);
        closing.push(EventBody::RunFinished {
            thread_id,
            run_id,
            result: None,
            outcome: Some(Outcome::Cancelled),
            usage: None,
        });
        return Repair {
            events: closing,
            continue_run: None,
        };
    }
    if attempts >= MAX_RECOVERIES {
        let mut closing = open.closing_all(UNKNOWN);
        closing.push(EventBody::RunError {
            message: format!(
                "Tandem stopped during this run {} times; it was not continued again",
                attempts + 1
            ),
            code: Some("recovery_limit".into()),
        });
        return Repair {
            events: closing,
            continue_run: None,
        };
    }
    let mut closing = open.closing_content();
    for id in open.streaming_calls() {
        closing.push(EventBody::ToolCallEnd {
            tool_call_id: id.clone(),
        });
        closing.push(error_result(id, CUT_OFF));
    }
    let in_model_call = open.step_open(MODEL_CALL_STEP);
    closing.extend(open.closing_steps());
    // Calls run in order, so only the first unanswered one can have started, and only
    // once its model call had finished.
    let running = open
        .unanswered()
        .iter()
        .find(|id| !open.streaming_calls().contains(id));
    if let (false, Some(id)) = (in_model_call, running) {
        let name = names.get(id).map(String::as_str).unwrap_or_default();
        if !tools.idempotent(name) {
            closing.push(EventBody::ToolCallResult {
                message_id: new_id("msg"),
                tool_call_id: id.clone(),
                content: json!({"error": UNKNOWN, "outcomeUnknown": true}).to_string(),
                role: Some(ToolRole::Tool),
            });
        }
    }
    closing.push(EventBody::Custom {
        name: RECOVERED_EVENT.into(),
        value: json!({"runId": run_id, "attempt": attempts + 1}),
    });
    Repair {
        events: closing,
        continue_run: Some(run_id),
    }
}

/// The run whose last event says it waits for a slot, if that is how the log ends.
fn waiting_for_slot(events: &[Event]) -> Option<String> {
    match &events.last()?.body {
        EventBody::Custom { name, value } if name == shared::custom::RUN_QUEUED => {
            value.get("runId")?.as_str().map(str::to_string)
        }
        _ => None,
    }
}

fn error_result(tool_call_id: &str, why: &str) -> EventBody {
    EventBody::ToolCallResult {
        message_id: new_id("msg"),
        tool_call_id: tool_call_id.into(),
        content: json!({ "error": why }).to_string(),
        role: Some(ToolRole::Tool),
    }
}

#[cfg(test)]
#[path = "recovery_tests.rs"]
mod tests;
