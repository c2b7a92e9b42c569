//! Spans of runs as they end: a run's end queues its session and id (never waiting); one
//! task per app reads each session's log, makes the run's spans and hands them to the
//! exporter. A run's spans are made from what its end committed, so they are the spans
//! `tandem traces export` makes of the same log.

use std::sync::{Arc, Mutex};

use shared::timeline::Timeline;
use tokio::sync::Notify;

use super::{SpanSource, Traces};
use crate::domain::SessionId;
use crate::lifecycle::Lifecycle;
use crate::store::Store;

/// Run ends waiting to be read at most; past it, a run's spans are dropped (and logged).
const MAX_WAITING: usize = 4_096;

/// Runs that ended, oldest first. A `std::sync::Mutex`: held only to push or take, never
/// across an `.await`.
#[derive(Default)]
pub(super) struct Queue {
    ended: Mutex<QueueState>,
    wake: Notify,
}

#[derive(Default)]
struct QueueState {
    runs: Vec<(SessionId, String)>,
    closed: bool,
    dropped: u64,
}

impl Queue {
    pub(super) fn push(&self, session: SessionId, run_id: &str) {
        let mut state = self.ended.lock().expect("trace queue lock poisoned");
        if state.runs.len() >= MAX_WAITING {
            state.dropped += 1;
            return;
        }
        state.runs.push((session, run_id.to_string()));
        drop(state);
        self.wake.notify_one();
    }

    pub(super) fn close(&self) {
        self.ended.lock().expect("trace queue lock poisoned").closed = true;
        self.wake.notify_one();
    }

    /// The runs that ended since the last take, with how many were dropped; `None` once
    /// closed and empty.
    async fn take(&self) -> Option<(Vec<(SessionId, String)>, u64)> {
        loop {
            let notified = self.wake.notified();
            {
                let mut state = self.ended.lock().expect("trace queue lock poisoned");
                if !state.runs.is_empty() || state.dropped > 0 {
                    let dropped = std::mem::take(&mut state.dropped);
                    return Some((std::mem::take(&mut state.runs), dropped));
                }
                if state.closed {
                    return None;
                }
            }
            notified.await;
        }
    }
}

/// Starts the task that turns ended runs into spans (nothing when traces are off). It
/// ends once the runs have stopped ([`Lifecycle::ending`]), after the runs already
/// queued; [`Traces::shutdown`] then exports what the processor holds.
pub fn spawn<S: Store>(store: Arc<S>, traces: Traces, lifecycle: &Lifecycle) {
    if traces.live().is_none() {
        return;
    }
    let ending = lifecycle.ending().clone();
    lifecycle.spawn_until_ending(async move {
        let Some(queue) = traces.live() else { return };
        loop {
            let taken = tokio::select! {
                taken = queue.take() => taken,
                _ = ending.cancelled() => {
                    queue.close();
                    queue.take().await
                }
            };
            let Some((ended, dropped)) = taken else { break };
            if dropped > 0 {
                tracing::warn!(
                    dropped,
                    "the trace queue was full: the spans of some runs were dropped"
                );
            }
            for (session, run_id) in ended {
                export_run(&*store, &traces, session, &run_id).await;
            }
        }
    });
}

/// Reads `session`'s log and exports the spans of `run_id`'s end.
async fn export_run<S: Store>(store: &S, traces: &Traces, session: SessionId, run_id: &str) {
    let Some(spans) = traces.spans() else { return };
    let rows = match store.events_after(session, 0, u32::MAX).await {
        Ok(rows) => rows,
        Err(error) => {
            tracing::warn!(%error, %session, run = run_id, "could not read the log for a run's spans");
            return;
        }
    };
    let mut timeline = Timeline::new(spans.captures_content());
    for row in &rows {
        if let Ok(event) = serde_json::from_str::<shared::Event>(&row.json) {
            timeline.observe(row.seq, &event);
        }
    }
    let runs = timeline.into_runs();
    let Some(index) = runs.iter().rposition(|run| run.run_id == run_id) else {
        return;
    };
    let session = session.to_string();
    traces.export(spans.of_run(SpanSource { session: &session }, &runs, index));
}
