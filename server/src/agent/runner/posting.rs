//! A person's message, whatever the session is doing: it starts a run when the session is
//! idle, and otherwise does what its `whileRunning` says ([`super::queue`]).

use shared::api::{RunAccepted, SessionStatus};
use shared::queue::WhileRunning;

use super::Runner;
use crate::agent::new_message::{run_id_for, NewMessage};
use crate::agent::refusal::Refusal;
use crate::domain::{SessionId, UserId};
use crate::store::Store;

impl<S: Store> Runner<S> {
    /// A person's message: starts a run, or, if one is active or input is awaited, does
    /// what its `whileRunning` (else `--while-running`) says: waits in the queue, steers
    /// the run, interrupts it, or is refused. `owner`: the session's owner, whose line
    /// the run waits in for a slot.
    pub async fn post_message(
        &self,
        session: SessionId,
        owner: UserId,
        message: NewMessage,
    ) -> Result<RunAccepted, Refusal> {
        self.check_message(&message, owner)?;
        let mode = message.while_running.unwrap_or(self.deps.while_running);
        let run_id = run_id_for(message.input.as_ref());
        // Each pass meets another state of the session (a run ended, another began);
        // three are plenty for the two it can be in.
        for _ in 0..3 {
            let started = self.start_message(session, owner, &message, &run_id, None);
            match started.await {
                Err(Refusal::Busy(_)) if mode != WhileRunning::Reject => {}
                other => return other,
            }
            if let Some(queued) = self.queue().put(session, &message, &run_id, mode).await? {
                return Ok(queued);
            }
        }
        Err(Refusal::Busy(SessionStatus::Running))
    }
}
