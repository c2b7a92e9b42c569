//! Stopping: the person ends the active run, or declines the question it waits on.

use serde_json::json;
use shared::api::SessionStatus;
use shared::EventBody;

use super::{rejected, Runner};
use crate::agent::refusal::Refusal;
use crate::agent::run::halt::STOP_EVENT;
use crate::domain::SessionId;
use crate::store::{Applied, Guard, Rejection, Store};

impl<S: Store> Runner<S> {
    /// Stops the active run, or declines the pending question and finishes cancelled.
    ///
    /// A stop is persisted (`CUSTOM tandem.stop_requested`, only while the run is still
    /// active) before the run's token is cancelled, so a crash in between cannot undo it:
    /// recovery finishes such a run as cancelled instead of continuing it.
    pub async fn cancel(&self, session: SessionId) -> Result<(), Refusal> {
        let row = self.deps.store.session(session).await?;
        let row = row.ok_or_else(|| Refusal::SessionNotFound(session))?;
        match (row.status, row.active_run_id) {
            (SessionStatus::AwaitingInput, _) => {
                self.answers().decline_pending(session).await?;
                // The run ended with the decline, and no loop of it takes the queue.
                self.start_next_queued(session).await
            }
            (SessionStatus::Running, Some(run_id)) => {
                let stop = EventBody::Custom {
                    name: STOP_EVENT.into(),
                    value: json!({ "runId": run_id }),
                };
                let guard = Guard::InRun { run_id };
                let persisted = self.submit(session, guard, vec![stop]).await;
                let local = self.cancel_local(session);
                match persisted? {
                    Applied::Committed { .. } => {
                        if !local {
                            tracing::warn!(%session, "stop persisted for a run this process does not own");
                        }
                        Ok(())
                    }
                    // The run ended between the read and the write: nothing left to stop.
                    Applied::Rejected(Rejection::RunEnded) => Err(Refusal::Idle),
                    Applied::Rejected(other) => rejected(session, other).map(drop),
                }
            }
            _ => Err(Refusal::Idle),
        }
    }
}
