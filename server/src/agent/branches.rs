//! Branches: a new line of a conversation that shares a prefix of its log. The log never
//! changes; a branch reads its parent's events up to where it parts (the store keeps them
//! where they are) and appends its own.
//!
//! A branch parts between runs: at 0 (before anything) or at the seq of a run's last event
//! (`RUN_FINISHED`, `RUN_ERROR`), so its history never ends inside a run; where a run waits
//! for its person, the branch waits too and its questions can be answered otherwise.
//! Deciding that reads one event, whatever the length of the log.

use shared::attachments::Attachment;
use shared::{Event, EventBody, Outcome};

use super::Refusal;
use crate::domain::{now_ms, SessionId};
use crate::metrics::METRICS;
use crate::store::{Fork, NewBranch, SessionRow, Store};

/// Makes a branch of `parent` that parts after its event `at_seq`, named `title` or as the
/// parent is. Refused when the seq is inside a run; `SessionNotFound` when it is past the
/// end (or the parent went meanwhile).
pub async fn fork<S: Store>(
    store: &S,
    parent: &SessionRow,
    at_seq: u64,
    title: Option<&str>,
) -> Result<SessionRow, Refusal> {
    let branch = part(store, parent, at_seq, title, SessionId::generate()).await?;
    METRICS.branched("fork");
    Ok(branch)
}

/// A branch `id` of `parent` after its event `at_seq`, if a branch may part there.
async fn part<S: Store>(
    store: &S,
    parent: &SessionRow,
    at_seq: u64,
    title: Option<&str>,
    id: SessionId,
) -> Result<SessionRow, Refusal> {
    if at_seq > parent.last_seq {
        return Err(Refusal::SessionNotFound(parent.id));
    }
    // A branch where a run waits for its person waits too, with its own copy of the
    // run's questions.
    let mut waiting = None;
    if at_seq > 0 {
        let rows = store.events_after(parent.id, at_seq - 1, 1).await?;
        let body = rows
            .first()
            .filter(|row| row.seq == at_seq)
            .and_then(|row| serde_json::from_str::<Event>(&row.json).ok())
            .map(|event| event.body);
        match body {
            Some(EventBody::RunFinished {
                outcome: Some(Outcome::Interrupt { .. }),
                run_id,
                ..
            }) => waiting = Some(run_id),
            Some(EventBody::RunFinished { .. } | EventBody::RunError { .. }) => {}
            Some(_) => return Err(Refusal::NotAForkPoint { at_seq }),
            None => {
                return Err(Refusal::Internal(
                    "an event the session's last seq counts is unreadable",
                ))
            }
        }
    }
    let fork = Fork {
        parent: parent.id,
        at_seq,
    };
    let branch = store
        .fork_session(NewBranch {
            waiting: waiting.as_deref(),
            title,
            ..NewBranch::new(id, fork, now_ms())
        })
        .await?;
    branch.ok_or(Refusal::SessionNotFound(parent.id))
}

/// A run of a session's history, as found by the message or run it names.
struct RunFound {
    run_id: String,
    /// The seq of its `RUN_STARTED`: a branch that redoes it parts just before.
    started_at: u64,
    /// The person's message that started it (typed, or in an AG-UI client's input), if
    /// one did (not an answer).
    message: Option<(String, String)>,
    /// What that message carried.
    attachments: Vec<Attachment>,
    /// Its `RUN_FINISHED` or `RUN_ERROR` is in the log.
    ended: bool,
}

/// The runs of a history, in order, and the ids of messages not the person's.
async fn runs_of<S: Store>(
    store: &S,
    session: SessionId,
) -> Result<(Vec<RunFound>, Vec<String>), Refusal> {
    let rows = store.events_after(session, 0, u32::MAX).await?;
    let mut runs: Vec<RunFound> = Vec::new();
    let mut others: Vec<String> = Vec::new();
    let mut text: Option<(String, String)> = None;
    for row in rows {
        let Ok(event) = serde_json::from_str::<Event>(&row.json) else {
            continue;
        };
        match event.body {
            EventBody::RunStarted { run_id, input, .. } => {
                // An AG-UI client's message travels in the run's input.
                let message = shared::run_input::input_messages(input.as_ref())
                    .into_iter()
                    .find_map(|message| match message {
                        shared::run_input::InputMessage::User { id, text } => Some((id, text)),
                        _ => None,
                    });
                runs.push(RunFound {
                    run_id,
                    started_at: row.seq,
                    message,
                    attachments: Vec::new(),
                    ended: false,
                })
            }
            EventBody::TextMessageStart {
                message_id,
                role: Some(shared::TextRole::User),
                ..
            } => text = Some((message_id, String::new())),
            EventBody::TextMessageStart { message_id, .. } => others.push(message_id),
            EventBody::TextMessageContent { message_id, delta } => {
                if let Some((_, content)) = text.as_mut().filter(|(id, _)| *id == message_id) {
                    content.push_str(&delta);
                }
            }
            EventBody::TextMessageEnd { message_id } => {
                if let Some(found) = text.take_if(|(id, _)| *id == message_id) {
                    if let Some(run) = runs.last_mut().filter(|run| run.message.is_none()) {
                        run.message = Some(found);
                    }
                }
            }
            EventBody::Custom { name, value } if name == shared::custom::ATTACHMENTS => {
                let Some(recorded) = super::attached::from_event(&value) else {
                    continue;
                };
                let run = runs.last_mut().filter(|run| {
                    let message = run.message.as_ref();
                    message.is_some_and(|(id, _)| *id == recorded.message_id)
                });
                if let Some(run) = run {
                    run.attachments = recorded.attachments;
                }
            }
            EventBody::RunFinished { .. } | EventBody::RunError { .. } => {
                if let Some(run) = runs.last_mut() {
                    run.ended = true;
                }
            }
            _ => {}
        }
    }
    Ok((runs, others))
}

/// A run to do again in a branch: where the branch parts (just before the run), the
/// message that starts its run there, and how it came to be (for the metric).
pub struct Redo {
    at_seq: u64,
    /// The message that starts the branch's run.
    pub text: String,
    /// What it carries.
    pub attachments: Vec<Attachment>,
    how: &'static str,
}

impl Redo {
    /// Makes the branch of `parent` this redo parts into.
    pub async fn branch<S: Store>(
        &self,
        store: &S,
        parent: &SessionRow,
    ) -> Result<SessionRow, Refusal> {
        let branch = part(store, parent, self.at_seq, None, SessionId::generate()).await?;
        METRICS.branched(self.how);
        Ok(branch)
    }

    /// Makes the branch `id`, titled `title`, of `parent` this redo parts into (a replay's
    /// trial, whose id its row holds before the branch exists).
    pub async fn branch_as<S: Store>(
        &self,
        store: &S,
        parent: &SessionRow,
        id: SessionId,
        title: &str,
    ) -> Result<SessionRow, Refusal> {
        let branch = part(store, parent, self.at_seq, Some(title), id).await?;
        METRICS.branched(self.how);
        Ok(branch)
    }

    /// A replay's redo: the message `text` with `attachments` sent again in a branch
    /// that parts after `at_seq` (as [`recorded_run`] found it).
    pub fn for_replay(at_seq: u64, text: String, attachments: Vec<Attachment>) -> Self {
        Self {
            at_seq,
            text,
            attachments,
            how: "replay",
        }
    }

    /// Where the branch parts: the seq of the last event it shares.
    pub fn at_seq(&self) -> u64 {
        self.at_seq
    }
}

/// A run a replay sends again: the redo that parts just before it, and where what it
/// recorded lies in its session's log.
pub struct RecordedRun {
    pub redo: Redo,
    pub run_id: String,
    /// Its `RUN_STARTED`.
    pub from_seq: u64,
    /// The last event before the next run a message of the person's started (its runs
    /// after answers are part of it), or the log's last.
    pub to_seq: u64,
}

/// The run `run_id` of `parent` (the last one a message of the person's started when
/// `None`; for a run after an answer, the one whose message began it) as a replay sends it
/// again. Refused while it goes on, and when no message of the person's started it.
pub async fn recorded_run<S: Store>(
    store: &S,
    parent: &SessionRow,
    run_id: Option<&str>,
) -> Result<RecordedRun, Refusal> {
    let (runs, _) = runs_of(store, parent.id).await?;
    let at = match run_id {
        // A run after an answer is replayed from the message that began its chain.
        Some(run_id) => {
            let named = runs
                .iter()
                .position(|run| run.run_id == run_id)
                .ok_or_else(|| {
                    Refusal::NotFound(format!("no run {} in this session", cut(run_id)))
                })?;
            runs[..=named]
                .iter()
                .rposition(|run| run.message.is_some())
                .unwrap_or(named)
        }
        None => runs
            .iter()
            .rposition(|run| run.message.is_some())
            .ok_or_else(|| {
                Refusal::InvalidMessage("this session has no run a message of yours started".into())
            })?,
    };
    let run = &runs[at];
    let Some((_, text)) = run.message.clone() else {
        return Err(Refusal::InvalidMessage(format!(
            "run {} was not started by a message of yours (it continued after an answer)",
            cut(&run.run_id)
        )));
    };
    let next = runs[at + 1..].iter().find(|later| later.message.is_some());
    let to_seq = next.map_or(parent.last_seq, |later| later.started_at - 1);
    let last = runs[at..]
        .iter()
        .take_while(|later| next.is_none_or(|n| later.started_at < n.started_at))
        .last();
    if last.is_some_and(|last| !last.ended) {
        return Err(Refusal::InvalidMessage(format!(
            "run {} is still going: stop it or wait for it to end",
            cut(&run.run_id)
        )));
    }
    Ok(RecordedRun {
        redo: Redo {
            at_seq: run.started_at - 1,
            text,
            attachments: run.attachments.clone(),
            how: "replay",
        },
        run_id: run.run_id.clone(),
        from_seq: run.started_at,
        to_seq,
    })
}

/// Editing the person's message `message_id` of `parent` to `text` with `attachments`
/// (the original's when `None`): a branch just before the run that message started.
pub async fn edit<S: Store>(
    store: &S,
    parent: &SessionRow,
    message_id: &str,
    text: String,
    attachments: Option<Vec<Attachment>>,
) -> Result<Redo, Refusal> {
    let (runs, others) = runs_of(store, parent.id).await?;
    if others.iter().any(|id| id == message_id) {
        return Err(Refusal::InvalidMessage(format!(
            "message {} is not one of yours: only the person's messages can be edited \
             (regenerate an answer instead)",
            cut(message_id)
        )));
    }
    let run = runs
        .iter()
        .find(|run| run.message.as_ref().is_some_and(|(id, _)| id == message_id))
        .ok_or_else(|| {
            Refusal::NotFound(format!("no message {} in this session", cut(message_id)))
        })?;
    Ok(Redo {
        at_seq: run.started_at - 1,
        text,
        attachments: attachments.unwrap_or_else(|| run.attachments.clone()),
        how: "edit",
    })
}

/// Running `run_id`'s message of `parent` again: a branch just before that run. Refused
/// while the run goes on, and for a run no message of the person's started.
pub async fn regenerate<S: Store>(
    store: &S,
    parent: &SessionRow,
    run_id: &str,
) -> Result<Redo, Refusal> {
    let (runs, _) = runs_of(store, parent.id).await?;
    let run = runs
        .iter()
        .find(|run| run.run_id == run_id)
        .ok_or_else(|| Refusal::NotFound(format!("no run {} in this session", cut(run_id))))?;
    if !run.ended {
        return Err(Refusal::InvalidMessage(format!(
            "run {} is still going: stop it or wait for it to end",
            cut(run_id)
        )));
    }
    let Some((_, text)) = run.message.clone() else {
        return Err(Refusal::InvalidMessage(format!(
            "run {} was not started by a message of yours (it continued after an answer)",
            cut(run_id)
        )));
    };
    Ok(Redo {
        at_seq: run.started_at - 1,
        text,
        attachments: run.attachments.clone(),
        how: "regenerate",
    })
}

/// An id from the caller, cut short for an error message.
fn cut(id: &str) -> String {
    id.chars().take(80).collect()
}
