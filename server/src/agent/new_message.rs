//! A person's message as it starts a run: what it holds, and the checks it must pass
//! before anything is written (its length, its `clientMessageId`), and the title it gives
//! a session that has none.

use serde_json::json;
use shared::attachments::Attachment;
use shared::{EventBody, TextRole};

use super::attached;
use super::refusal::Refusal;
use crate::domain::new_id;

/// Longest `clientMessageId` accepted.
const MAX_CLIENT_ID: usize = 128;

/// A person's message, as it starts a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewMessage {
    pub text: String,
    /// The caller's id for the request: a repeat starts nothing new and gets the run
    /// the first one started.
    pub client_message_id: Option<String>,
    /// The AG-UI input that brought the message, recorded in the run's `RUN_STARTED`
    /// (which then carries the message itself, see `shared::run_input`).
    pub input: Option<serde_json::Value>,
    /// A model of `Runner::models` for this run and the session's later ones.
    pub model: Option<String>,
    /// What it does if a run is active (the server's `--while-running` when `None`).
    pub while_running: Option<shared::queue::WhileRunning>,
    /// Its `messageId` (a queued message keeps the id it was queued with); a new one
    /// when `None`.
    pub message_id: Option<String>,
    /// The files and images it carries, checked ([`super::attached::resolve`]).
    pub attachments: Vec<Attachment>,
    /// The schedule's fire it is: recorded in the transaction that starts (or queues) it,
    /// and refused if its time already has a fire.
    pub fire: Option<crate::store::FireClaim>,
    /// The replay trial it starts (`CUSTOM tandem.replay`, after the message).
    pub replay: Option<shared::replays::ReplayMark>,
}

impl NewMessage {
    /// A message typed into Tandem's own page or sent over REST.
    pub fn typed(text: String, client_message_id: Option<String>) -> Self {
        Self {
            text,
            client_message_id,
            ..Self::default()
        }
    }

    /// Checks the message against the limits and its model against `models`.
    pub(super) fn check(&self, models: &[String], max_bytes: usize) -> Result<(), Refusal> {
        if let Some(model) = self
            .model
            .as_deref()
            .filter(|m| !models.iter().any(|k| k == m))
        {
            return Err(Refusal::InvalidMessage(format!(
                "no model `{}` here; GET /api/models lists them: {}",
                model.chars().take(80).collect::<String>(),
                models.join(", ")
            )));
        }
        // A message of files alone says nothing more.
        if self.text.trim().is_empty() && !self.attachments.is_empty() {
            return check_message("files", self.client_message_id.as_deref(), max_bytes);
        }
        check_message(&self.text, self.client_message_id.as_deref(), max_bytes)
    }

    /// The title it gives a session that has none: its first line, or, for files alone,
    /// the first file's name.
    pub(super) fn title(&self) -> String {
        match self.attachments.first() {
            Some(first) if self.text.trim().is_empty() => title_of(&first.name),
            _ => title_of(&self.text),
        }
    }

    /// The events that start its run after `started` (its `RUN_STARTED`): the model
    /// picked, if any, then the message itself with its attachments, unless an AG-UI
    /// client's input carries it (the client holds it already; its attachments are
    /// recorded under the client's message id).
    pub(super) fn start_events(self, started: EventBody) -> Vec<EventBody> {
        let mut events = vec![started];
        if let Some(model) = self.model {
            events.push(EventBody::Custom {
                name: shared::custom::MODEL_SELECTED.into(),
                value: json!({ "model": model }),
            });
        }
        match self.input {
            None => {
                let message_id = self.message_id.unwrap_or_else(|| new_id("msg"));
                events.extend(user_message(message_id, self.text, &self.attachments));
            }
            Some(_) => {
                let message_id = self.client_message_id.unwrap_or_default();
                events.extend(attached::event(&message_id, &self.attachments));
            }
        }
        if let Some(mark) = self.replay {
            events.push(EventBody::Custom {
                name: shared::custom::REPLAY.into(),
                value: serde_json::to_value(&mark).expect("a replay mark serialises"),
            });
        }
        events
    }
}

/// The events of one message of the person's: its text, then what it carries.
pub(super) fn user_message(
    message_id: String,
    text: String,
    attachments: &[Attachment],
) -> Vec<EventBody> {
    let attached = attached::event(&message_id, attachments);
    let mut events = vec![EventBody::TextMessageStart {
        message_id: message_id.clone(),
        role: Some(TextRole::User),
        name: None,
    }];
    // AG-UI refuses an empty delta: a message of files alone has no content event.
    if !text.is_empty() {
        events.push(EventBody::TextMessageContent {
            message_id: message_id.clone(),
            delta: text,
        });
    }
    events.push(EventBody::TextMessageEnd { message_id });
    events.extend(attached);
    events
}

/// Checks a message's text and `clientMessageId` against the limits.
pub(super) fn check_message(
    text: &str,
    client_message_id: Option<&str>,
    max_bytes: usize,
) -> Result<(), Refusal> {
    if text.trim().is_empty() {
        return Err(Refusal::InvalidMessage("the message is empty".into()));
    }
    if text.len() > max_bytes {
        return Err(Refusal::InvalidMessage(format!(
            "the message is longer than {max_bytes} bytes"
        )));
    }
    check_client_id(client_message_id)
}

/// Checks a `clientMessageId`'s length.
pub(super) fn check_client_id(client_message_id: Option<&str>) -> Result<(), Refusal> {
    if client_message_id.is_some_and(|id| id.is_empty() || id.len() > MAX_CLIENT_ID) {
        return Err(Refusal::InvalidMessage(format!(
            "clientMessageId must be 1 to {MAX_CLIENT_ID} bytes"
        )));
    }
    Ok(())
}

/// The id of a run an input starts: the AG-UI client's `runId` (checked when the input
/// was read), so the client can correlate `RUN_STARTED.runId` with its own; a new
/// `run_…` id for the page's and REST's runs. A client's `runId` that already started a
/// run of the thread never gets here: that input replays its run.
pub(super) fn run_id_for(input: Option<&serde_json::Value>) -> String {
    input
        .and_then(|input| input.get("runId"))
        .and_then(serde_json::Value::as_str)
        .map_or_else(|| new_id("run"), str::to_string)
}

/// A session title from its first message: the first line, at most 60 characters.
pub(super) fn title_of(text: &str) -> String {
    let first = text.trim().lines().next().unwrap_or_default();
    let line = shared::text::one_line(first);
    let line = line.as_str();
    if line.chars().count() <= 60 {
        return line.to_string();
    }
    let cut: String = line.chars().take(59).collect();
    format!("{}…", cut.trim_end())
}
