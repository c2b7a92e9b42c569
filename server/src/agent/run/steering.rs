//! Steering: the person's messages sent with `whileRunning: steer` join the active run at
//! its next model call, instead of waiting for its end ([`crate::agent::runner::queue`]
//! keeps them until then).

use super::recorder::{Recorder, RunAbort};
use crate::agent::new_message::user_message;
use crate::agent::RunDeps;
use crate::store::{Guard, QueuedRow, Store};

/// Appends the steering messages waiting for the run as the person's messages, which the
/// next model call reads; true if there were any. Each leaves the queue in the commit
/// that appends it, under the run's lease.
pub(super) async fn take_steering<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
) -> Result<bool, RunAbort> {
    // A message withdrawn between the read and the commit refuses the batch: read again.
    for _ in 0..3 {
        let queued = deps
            .store
            .queued_messages(recorder.session())
            .await
            .map_err(|e| RunAbort::Write(e.into()))?;
        let steering: Vec<QueuedRow> = queued.into_iter().filter(|q| q.steer).collect();
        if steering.is_empty() {
            return Ok(false);
        }
        let ids = steering.iter().map(|q| q.id.clone()).collect();
        let events = steering
            .into_iter()
            .flat_map(|q| user_message(q.id, q.text, &q.extra.attachments))
            .collect();
        let guard = Guard::TakeSteering {
            run_id: recorder.run_id().to_string(),
            ids,
        };
        if recorder.emit_guarded(guard, events).await? {
            return Ok(true);
        }
    }
    Ok(false)
}
