//! Continue: the person goes on with an answer they stopped. The session's last run (a
//! run that only carried a note, a rating or a change of the state, does not count) must
//! have been stopped and have written an answer; a new run starts with
//! `CUSTOM tandem.continue {runId, messageId}` in place of a message of the person's. The
//! model is told to go on from where the answer stopped
//! ([`crate::agent::conversation::ChatMessage::Continue`]); the page joins the new run's answer to
//! the stopped one and shows one answer.

use serde_json::json;
use shared::{Event, EventBody, Outcome, TextRole};

use shared::api::{RunAccepted, SessionStatus};

use super::Runner;
use crate::agent::conversation::MODEL_CALL_STEP;
use crate::agent::new_message::check_client_id;
use crate::agent::refusal::Refusal;
use crate::domain::{new_id, SessionId, UserId};
use crate::store::{Guard, Store};

impl<S: Store> Runner<S> {
    /// Continues the answer the session's last run, `run_id`, was stopped in: a run of its
    /// own that the model is told goes on from where the answer stopped, and whose answer
    /// joins it (this module). Refused unless `run_id` is the last run, was
    /// stopped and wrote an answer, or while a run is active or messages wait.
    pub async fn continue_answer(
        &self,
        session: SessionId,
        owner: UserId,
        run_id: &str,
        client_message_id: Option<String>,
    ) -> Result<RunAccepted, Refusal> {
        self.check_room(owner)?;
        check_client_id(client_message_id.as_deref())?;
        let row = self.deps.store.session(session).await?;
        let row = row.ok_or(Refusal::SessionNotFound(session))?;
        // A repeat of the request that started the continuation answers with its run below.
        if row.status != SessionStatus::Idle && client_message_id.is_none() {
            return Err(Refusal::Busy(row.status));
        }
        let new_run = new_id("run");
        let started = self.run_started(session, &new_run);
        let store = &*self.deps.store;
        let id = client_message_id.as_deref();
        let found = start_events(store, session, run_id, id, started).await?;
        let events = match found {
            Found::Start(events) => events,
            Found::Repeat(run) => return Ok(RunAccepted::started(run, true)),
        };
        let guard = Guard::StartRun {
            run_id: new_run.clone(),
            client_message_id,
            title: String::new(),
            queued: None,
            fire: None,
        };
        self.start(session, owner, new_run, guard, events).await
    }
}

/// A run as the log tells it, for Continue.
#[derive(Debug, Default)]
struct RunSeen {
    run_id: String,
    /// Its latest answer's message id.
    answer: Option<String>,
    /// It called the model or wrote a message (a note's run does neither).
    worked: bool,
    stopped: bool,
}

/// What a request to continue finds in the log.
#[derive(Debug, PartialEq)]
pub(super) enum Found {
    /// The events that start the continuing run, after its `RUN_STARTED`.
    Start(Vec<EventBody>),
    /// The request was made before (its `clientMessageId`): the run it started.
    Repeat(String),
}

/// What continuing the answer `run_id` was stopped in takes: the events that start the
/// continuing run after its `RUN_STARTED` (`started`), or the run an earlier request with
/// the same `client_message_id` started; refused unless `run_id` is the session's last
/// run, was stopped, and wrote an answer.
pub(super) async fn start_events<S: Store>(
    store: &S,
    session: SessionId,
    run_id: &str,
    client_message_id: Option<&str>,
    started: EventBody,
) -> Result<Found, Refusal> {
    let rows = store.events_after(session, 0, u32::MAX).await?;
    let events = rows
        .iter()
        .filter_map(|row| serde_json::from_str::<Event>(&row.json).ok());
    let message_id = match stopped_answer(events, run_id, client_message_id)? {
        Answer::Stopped(message_id) => message_id,
        Answer::ContinuedBy(run) => return Ok(Found::Repeat(run)),
    };
    let mut value = json!({ "runId": run_id, "messageId": message_id });
    if let Some(id) = client_message_id {
        value["clientMessageId"] = json!(id);
    }
    Ok(Found::Start(vec![
        started,
        EventBody::Custom {
            name: shared::custom::CONTINUE.into(),
            value,
        },
    ]))
}

/// The answer a request to continue names.
#[derive(Debug, PartialEq)]
enum Answer {
    /// The id of the answer the session's last run was stopped in.
    Stopped(String),
    /// The run an earlier request with the same `clientMessageId` started.
    ContinuedBy(String),
}

/// The answer the session's last run was stopped in, when that run is `run_id`, or the
/// run that `client_message_id` already started.
fn stopped_answer(
    events: impl Iterator<Item = Event>,
    run_id: &str,
    client_message_id: Option<&str>,
) -> Result<Answer, Refusal> {
    let mut runs: Vec<RunSeen> = Vec::new();
    for event in events {
        let run = runs.last_mut();
        match (event.body, run) {
            (EventBody::RunStarted { run_id, .. }, _) => runs.push(RunSeen {
                run_id,
                ..RunSeen::default()
            }),
            (EventBody::StepStarted { step_name }, Some(run)) if step_name == MODEL_CALL_STEP => {
                run.worked = true
            }
            (
                EventBody::TextMessageStart {
                    message_id, role, ..
                },
                Some(run),
            ) => {
                run.worked = true;
                if role != Some(TextRole::User) {
                    run.answer = Some(message_id);
                }
            }
            // A continuation stopped before it wrote continues the same answer again.
            (EventBody::Custom { name, value }, Some(run)) if name == shared::custom::CONTINUE => {
                if client_message_id.is_some()
                    && value["clientMessageId"].as_str() == client_message_id
                {
                    return Ok(Answer::ContinuedBy(run.run_id.clone()));
                }
                run.worked = true;
                run.answer = value["messageId"].as_str().map(str::to_string);
            }
            (EventBody::RunFinished { outcome, .. }, Some(run)) => {
                run.stopped = outcome == Some(Outcome::Cancelled)
            }
            _ => {}
        }
    }
    let shown: String = run_id.chars().take(80).collect();
    let last = runs.into_iter().rev().find(|run| run.worked);
    let Some(last) = last.filter(|run| run.run_id == run_id) else {
        return Err(Refusal::InvalidMessage(format!(
            "run {shown} is not the session's last run: only the last answer can be continued"
        )));
    };
    if !last.stopped {
        return Err(Refusal::InvalidMessage(format!(
            "run {shown} was not stopped: only an answer stopped before its end can be continued"
        )));
    }
    last.answer
        .map(Answer::Stopped)
        .ok_or_else(|| Refusal::InvalidMessage(format!("run {shown} wrote no answer to continue")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn log(values: Vec<serde_json::Value>) -> impl Iterator<Item = Event> {
        values
            .into_iter()
            .map(|value| serde_json::from_value(value).unwrap())
    }

    /// The answer to continue in `events` for `run`, or why not.
    fn stopped(events: Vec<serde_json::Value>, run: &str) -> Result<String, String> {
        match stopped_answer(log(events), run, None) {
            Ok(Answer::Stopped(message)) => Ok(message),
            Ok(other) => Err(format!("{other:?}")),
            Err(refusal) => Err(refusal.to_string()),
        }
    }

    fn stopped_run(run: &str, message: &str) -> Vec<serde_json::Value> {
        vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": run}),
            json!({"type": "TEXT_MESSAGE_START", "messageId": format!("u-{run}"), "role": "user"}),
            json!({"type": "TEXT_MESSAGE_END", "messageId": format!("u-{run}")}),
            json!({"type": "STEP_STARTED", "stepName": "model_call"}),
            json!({"type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant"}),
            json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": "Half"}),
            json!({"type": "TEXT_MESSAGE_END", "messageId": message}),
            json!({"type": "STEP_FINISHED", "stepName": "model_call"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": run,
                   "outcome": {"type": "cancelled"}}),
        ]
    }

    #[test]
    fn the_last_stopped_answer_is_continued_and_a_rating_after_it_does_not_count() {
        let mut events = stopped_run("r1", "m1");
        assert_eq!(stopped(events.clone(), "r1"), Ok("m1".into()));
        // A rating is a short run of its own: it is no run to continue.
        events.extend([
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "note"}),
            json!({"type": "CUSTOM", "name": "tandem.feedback",
                   "value": {"runId": "r1", "rating": "up", "user": "ada"}}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "note"}),
        ]);
        assert_eq!(stopped(events, "r1"), Ok("m1".into()));
    }

    #[test]
    fn only_the_last_run_and_only_a_stopped_one_with_an_answer() {
        let mut events = stopped_run("r1", "m1");
        events.extend(stopped_run("r2", "m2"));
        let refused = stopped(events.clone(), "r1").unwrap_err();
        assert!(refused.contains("not the session's last run"), "{refused}");
        assert_eq!(stopped(events.clone(), "r2"), Ok("m2".into()));
        let finished: Vec<_> = events
            .into_iter()
            .map(|mut e| {
                if e["type"] == "RUN_FINISHED" {
                    e["outcome"] = json!({"type": "success"});
                }
                e
            })
            .collect();
        let refused = stopped(finished, "r2").unwrap_err();
        assert!(refused.contains("was not stopped"), "{refused}");
        let silent = vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r3"}),
            json!({"type": "STEP_STARTED", "stepName": "model_call"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r3",
                   "outcome": {"type": "cancelled"}}),
        ];
        let refused = stopped(silent, "r3").unwrap_err();
        assert!(refused.contains("no answer"), "{refused}");
        assert!(stopped(Vec::new(), "r9").is_err());
    }

    #[test]
    fn a_repeated_request_finds_the_run_it_started_and_a_continuation_goes_on_again() {
        let mut events = stopped_run("r1", "m1");
        events.extend([
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r2"}),
            json!({"type": "CUSTOM", "name": "tandem.continue",
                   "value": {"runId": "r1", "messageId": "m1", "clientMessageId": "c1"}}),
            json!({"type": "STEP_STARTED", "stepName": "model_call"}),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r2",
                   "outcome": {"type": "cancelled"}}),
        ]);
        let again = stopped_answer(log(events.clone()), "r1", Some("c1")).unwrap();
        assert_eq!(again, Answer::ContinuedBy("r2".into()));
        // Stopped before it wrote a word, the continuation continues the same answer.
        assert_eq!(stopped(events, "r2"), Ok("m1".into()));
    }
}
