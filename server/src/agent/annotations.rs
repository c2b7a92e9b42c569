//! A person's notes on a session that are no turn of its conversation (a change of the
//! shared state, a rating of an answer), and where they go in the log.
//!
//! AG-UI allows no event between runs, so a note goes into the active run while one runs,
//! and is otherwise a short run of its own (`RUN_STARTED`, the note, `RUN_FINISHED`,
//! committed together), which changes neither the session's status nor its questions: a
//! session paused on a question stays paused, the question answerable. The guard
//! ([`Guard::Annotate`]) checks in the write transaction that the session is still as it
//! was read; when it is not (a run began or ended meanwhile) the note is placed again.

use shared::api::SessionStatus;
use shared::{Event, EventBody, Outcome};

use super::refusal::Refusal;
use super::RunDeps;
use crate::domain::{new_id, now_ms, SessionId};
use crate::store::{Applied, Command, FeedbackRow, Guard, LogEntry, Rejection, StateRead, Store};

/// How often a note is placed again when the session moved under it.
pub(super) const ATTEMPTS: usize = 8;

/// What a note appends and records.
pub(super) struct Note {
    /// The note's own events (state events, `CUSTOM tandem.feedback`).
    pub events: Vec<EventBody>,
    /// For a change of the state: the state it was made from.
    pub state: Option<StateRead>,
    /// For a rating: the row it records.
    pub feedback: Option<FeedbackRow>,
}

/// Appends a note where it belongs now: `Ok(seq of its first event)`, or the rejection
/// that says the session moved (the caller places it again, made afresh if it must be).
pub(super) async fn append<S: Store>(
    deps: &RunDeps<S>,
    session: SessionId,
    note: Note,
) -> Result<Result<u64, Rejection>, Refusal> {
    let row = deps
        .store
        .session(session)
        .await?
        .ok_or(Refusal::SessionNotFound(session))?;
    let feedback = note.feedback.map(Box::new);
    let (guard, events, at) = match (row.status, row.active_run_id) {
        (SessionStatus::Running, Some(run_id)) => {
            let guard = Guard::Annotate {
                run_id: Some(run_id),
                feedback,
            };
            (guard, note.events, 0)
        }
        _ => {
            let guard = Guard::Annotate {
                run_id: None,
                feedback,
            };
            (guard, own_run(session, note.events), 1)
        }
    };
    let now = now_ms();
    let command = Command {
        session,
        guard,
        entries: events
            .into_iter()
            .map(|body| LogEntry::new(Event::at(body, now)))
            .collect(),
        state: note.state,
    };
    Ok(match deps.writer.submit(command).await? {
        Applied::Committed { first_seq } => Ok(first_seq + at),
        Applied::Rejected(rejection) => Err(rejection),
    })
}

/// Whether a rejection only says the session moved while the note was placed (a run began
/// or ended, queued messages start theirs, another change came first).
pub(super) fn moved(rejection: &Rejection) -> bool {
    matches!(
        rejection,
        Rejection::StateMoved
            | Rejection::RunEnded
            | Rejection::QueueWaiting
            | Rejection::Busy(SessionStatus::Running | SessionStatus::Idle)
    )
}

/// A note made while no run is active: a short run of its own, so the log stays a
/// sequence of runs as AG-UI has it.
fn own_run(session: SessionId, note: Vec<EventBody>) -> Vec<EventBody> {
    let run_id = new_id("run");
    let started = EventBody::RunStarted {
        thread_id: session.to_string(),
        run_id: run_id.clone(),
        parent_run_id: None,
        input: None,
    };
    let finished = EventBody::RunFinished {
        thread_id: session.to_string(),
        run_id,
        result: None,
        outcome: Some(Outcome::Success {
            pending_tool_call_ids: None,
        }),
        usage: None,
    };
    std::iter::once(started)
        .chain(note)
        .chain([finished])
        .collect()
}
