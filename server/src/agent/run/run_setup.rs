//! What a run needs before its first model call: one of the server's run slots (waiting,
//! recorded as `CUSTOM tandem.run_queued`, while none is free) and whom it works for.

use serde_json::json;
use shared::EventBody;
use tokio_util::sync::CancellationToken;

use super::recorder::{Recorder, RunAbort};
use crate::agent::slots::{Admission, RunSlot};
use crate::agent::tools::ToolContext;
use crate::agent::RunDeps;
use crate::domain::{UserId, UserName};
use crate::store::Store;

/// Waits for a run slot, recording the wait; `None` if the run was stopped meanwhile,
/// [`RunAbort::Halted`] if the process stops meanwhile (the log ends with the wait, so the
/// run takes its place in the line again at the next start).
pub(super) async fn take_slot(
    recorder: &mut Recorder,
    admission: Admission,
    (cancel, halting): (&CancellationToken, &CancellationToken),
) -> Result<Option<RunSlot>, RunAbort> {
    let (position, ready) = match admission {
        Admission::Now(slot) => return Ok(Some(slot)),
        Admission::Queued { position, ready } => (position, ready),
    };
    recorder
        .emit(EventBody::Custom {
            name: shared::custom::RUN_QUEUED.into(),
            value: json!({"runId": recorder.run_id(), "position": position}),
        })
        .await?;
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Ok(None),
        _ = halting.cancelled() => Err(RunAbort::Halted),
        slot = ready => Ok(slot.ok()),
    }
}

/// Who the run works for: the owner of its session, whose workspace its tools use.
pub(super) async fn tool_context<S: Store>(
    deps: &RunDeps<S>,
    recorder: &Recorder,
) -> Result<ToolContext, RunAbort> {
    let store_error = |e: crate::store::StoreError| RunAbort::Write(e.into());
    let owner = deps
        .store
        .session(recorder.session())
        .await
        .map_err(store_error)?
        .ok_or(RunAbort::SessionGone)?
        .owner;
    let user = match deps.store.user(owner).await.map_err(store_error)? {
        Some(row) => row.name,
        None if owner == UserId::LOCAL => UserName::parse_any(UserName::LOCAL).expect("valid"),
        None => return Err(RunAbort::SessionGone),
    };
    Ok(ToolContext {
        user,
        session: recorder.session(),
        owner,
    })
}
