//! A person's rating of an answer (`POST /api/sessions/{id}/runs/{runId}/feedback`): one
//! per user and run, changed by rating again. It is a note (`agent/annotations.rs`):
//! `CUSTOM tandem.feedback` in the log, into the active run or as a short run of its own,
//! with its row (`feedback`) and the webhook it owes written in the same transaction.

use shared::feedback::{FeedbackEvent, GiveFeedback, MAX_COMMENT_CHARS};
use shared::EventBody;

use super::{rejected, Runner};
use crate::agent::annotations::{self, Note, ATTEMPTS};
use crate::agent::conversation::MODEL_CALL_STEP;
use crate::agent::refusal::Refusal;
use crate::domain::{now_ms, SessionId, UserId, UserName};
use crate::store::{FeedbackRow, Store};

/// Ratings of a runner's sessions' answers (a view of the [`Runner`]).
pub struct Feedback<'a, S> {
    pub(super) runner: &'a Runner<S>,
}

impl<S: Store> Runner<S> {
    /// Ratings of the sessions' answers.
    pub fn feedback(&self) -> Feedback<'_, S> {
        Feedback { runner: self }
    }
}

impl<S: Store> Feedback<'_, S> {
    /// Records `user`'s rating of the answer run `run_id` made in `session` (replacing
    /// theirs, if they rated it before). A run of the session's line that made no model
    /// call (or none by that id) is [`Refusal::NotFound`].
    pub async fn give(
        &self,
        session: SessionId,
        (user, name): (UserId, &UserName),
        run_id: &str,
        given: GiveFeedback,
    ) -> Result<FeedbackEvent, Refusal> {
        let comment = given
            .comment
            .map(|comment| comment.trim().to_string())
            .filter(|comment| !comment.is_empty());
        if comment
            .as_ref()
            .is_some_and(|c| c.chars().count() > MAX_COMMENT_CHARS)
        {
            return Err(Refusal::InvalidMessage(format!(
                "a comment may be at most {MAX_COMMENT_CHARS} characters"
            )));
        }
        let deps = &self.runner.deps;
        if !answered(&*deps.store, session, run_id).await? {
            let shown: String = run_id.chars().take(80).collect();
            return Err(Refusal::NotFound(format!(
                "no answer of a run `{shown}` in this session"
            )));
        }
        let recorded = FeedbackEvent {
            run_id: run_id.to_string(),
            rating: given.rating,
            comment,
            user: name.to_string(),
        };
        for _ in 0..ATTEMPTS {
            let note = Note {
                events: vec![EventBody::Custom {
                    name: shared::custom::FEEDBACK.into(),
                    value: serde_json::to_value(&recorded).expect("feedback serialises"),
                }],
                state: None,
                feedback: Some(FeedbackRow {
                    session,
                    run_id: run_id.to_string(),
                    user,
                    user_name: name.to_string(),
                    rating: recorded.rating,
                    comment: recorded.comment.clone(),
                    at_ms: now_ms(),
                }),
            };
            match annotations::append(deps, session, note).await? {
                Ok(_) => return Ok(recorded),
                Err(rejection) if annotations::moved(&rejection) => continue,
                Err(rejection) => {
                    return Err(rejected(session, rejection)
                        .err()
                        .unwrap_or(Refusal::Internal("a rating was answered with a run")))
                }
            }
        }
        Err(Refusal::Busy(shared::api::SessionStatus::Running))
    }
}

/// Whether `run_id` is a run of the session's line that made a model call (an answer to
/// rate).
async fn answered<S: Store>(store: &S, session: SessionId, run_id: &str) -> Result<bool, Refusal> {
    let rows = store.events_after(session, 0, u32::MAX).await?;
    let mut in_run = false;
    for row in &rows {
        if !(row.json.contains("RUN_STARTED") || row.json.contains(MODEL_CALL_STEP)) {
            continue;
        }
        let Ok(event) = serde_json::from_str::<shared::Event>(&row.json) else {
            continue;
        };
        match event.body {
            EventBody::RunStarted { run_id: id, .. } => in_run = id == run_id,
            EventBody::StepStarted { step_name } if in_run && step_name == MODEL_CALL_STEP => {
                return Ok(true)
            }
            _ => {}
        }
    }
    Ok(false)
}
