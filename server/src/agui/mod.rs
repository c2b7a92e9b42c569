//! AG-UI over HTTP: a `RunAgentInput` in, the run's events out as Server-Sent Events,
//! for any AG-UI client (`@ag-ui/client`'s `HttpAgent`, CopilotKit) without glue code.
//!
//! The thread is the session: an unknown `threadId` (a UUID) becomes a new session of the
//! caller with that id, so the REST routes and the socket address it too. What an input
//! asks for is read against the log ([`thread`]): a new user message starts a run, `tool`
//! messages answer the interrupt of the client's tool calls, `resume` answers an
//! interrupt. Each goes through the runner exactly as the REST routes do (the same
//! guards, idempotency and refusals), with the input, holding only its new messages,
//! recorded in the run's `RUN_STARTED.input`. An input whose `runId` already started a
//! run (a client's retry) starts nothing and streams that run again. The response is the
//! run's [`RunFeed`].

mod feed;
pub mod input;
mod thread;

use serde_json::{json, Map, Value};
use shared::api::{RunAccepted, SessionStatus};
use shared::ResumeStatus;

pub use feed::{RunFeed, KEEP_ALIVE};
use input::{InputMessage, ResumeEntry, RunAgentInput};
use thread::Known;

use crate::agent::NewMessage;
use crate::auth::Caller;
use crate::domain::SessionId;
use crate::error::ApiError;
use crate::eventlog::Subscription;
use crate::state::AppState;
use crate::store::Store;

/// Largest input accepted, in bytes: an AG-UI client sends its whole conversation.
pub const MAX_INPUT_BYTES: usize = 8 * 1024 * 1024;
/// The interrupt reason of the client's tool calls (see `agent::client_tools`).
const CLIENT_TOOLS: &str = "client_tools";

/// What an input asks for, once the messages the log holds are set aside.
enum Ask {
    Message(InputMessage),
    ToolResults(Vec<InputMessage>),
    Resume(ResumeEntry),
}

/// The run an input started (or, repeated, had already started): its feed starts after
/// `after`, with `live` subscribed before the run could append.
pub struct Started {
    pub session: SessionId,
    pub run_id: String,
    pub after: u64,
    pub live: Subscription,
}

/// Acts on an input for `caller`: makes the thread's session if it is new, then starts
/// or resumes the run the input asks for.
pub async fn start<S: Store>(
    state: &AppState<S>,
    caller: &Caller,
    input: RunAgentInput,
    raw: Map<String, Value>,
) -> Result<Started, ApiError> {
    for tool in &input.tools {
        if state.runner.is_server_tool(&tool.name) {
            return Err(ApiError::InvalidMessage(format!(
                "tool `{}` is one of the server's own tools; give the client's another name",
                tool.name
            )));
        }
    }
    let session = thread_session(state, caller, &input.thread_id).await?;
    let live = state.hub.subscribe(session);
    let known = Known::read(&*state.store, session).await?;
    if let Some(run_id) = known.run_of_client(&input.run_id) {
        // The same input again (a client that retried): its run, from the start.
        return Ok(Started {
            session,
            after: known.before_run(run_id),
            run_id: run_id.to_string(),
            live,
        });
    }
    let (ask, new_messages) = ask(state, session, &input, &known).await?;
    // A client may pick one of `GET /api/models` in `forwardedProps.model`.
    let model = raw
        .get("forwardedProps")
        .and_then(|props| props.get("model"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let recorded = Some(recorded_input(raw, new_messages));
    // Runs wait for a slot in the line of the session's owner: the caller.
    let owner = caller.user;
    let accepted = match ask {
        Ask::Message(message) => {
            state.rates.send_message(caller.user)?;
            let message = NewMessage {
                text: message.text()?,
                client_message_id: Some(message.id),
                input: recorded,
                model,
            };
            state.runner.post_message(session, owner, message).await
        }
        Ask::ToolResults(results) => {
            let interrupt = client_tools_interrupt(state, session).await?;
            let payload = results_payload(&results)?;
            let status = ResumeStatus::Resolved;
            let answer =
                state
                    .runner
                    .answer(session, owner, &interrupt, status, Some(payload), recorded);
            answer.await
        }
        Ask::Resume(entry) => {
            let id = &entry.interrupt_id;
            let answer =
                state
                    .runner
                    .answer(session, owner, id, entry.status, entry.payload, recorded);
            answer.await
        }
    };
    let RunAccepted { run_id, duplicate } = accepted.map_err(|e| watch_hint(e, session, &known))?;
    let after = if duplicate {
        known.before_run(&run_id)
    } else {
        known.last_seq
    };
    Ok(Started {
        session,
        run_id,
        after,
        live,
    })
}

/// The caller's session of a thread, created (with the thread's id) if it is new.
async fn thread_session<S: Store>(
    state: &AppState<S>,
    caller: &Caller,
    thread_id: &str,
) -> Result<SessionId, ApiError> {
    let id = SessionId::parse(thread_id).map_err(|_| {
        ApiError::BadRequest("threadId must be a UUID (AG-UI clients generate one)".into())
    })?;
    let owned = |owner| {
        if owner == caller.user {
            Ok(id)
        } else {
            Err(ApiError::ThreadTaken)
        }
    };
    if let Some(row) = state.store.session(id).await? {
        return owned(row.owner);
    }
    state.rates.create_session(caller.user)?;
    match state.runner.create_thread(caller.user, id).await {
        Ok(_) => Ok(id),
        // Two first inputs of one thread raced: the other one made it.
        Err(error) => match state.store.session(id).await? {
            Some(row) => owned(row.owner),
            None => Err(error),
        },
    }
}

/// What the input asks for, and the messages that ask it.
async fn ask<S: Store>(
    state: &AppState<S>,
    session: SessionId,
    input: &RunAgentInput,
    known: &Known,
) -> Result<(Ask, Vec<InputMessage>), ApiError> {
    let new: Vec<&InputMessage> = input.messages.iter().filter(|m| !known.holds(m)).collect();
    let users: Vec<InputMessage> = new
        .iter()
        .filter(|m| m.role == "user")
        .map(|m| (*m).clone())
        .collect();
    let tools: Vec<InputMessage> = new
        .iter()
        .filter(|m| m.role == "tool")
        .map(|m| (*m).clone())
        .collect();
    let refuse = |message: &str| Err(ApiError::InvalidMessage(message.into()));
    if let Some(entry) = input.resume.first() {
        if input.resume.len() > 1 {
            return refuse(
                "Tandem waits on one interrupt at a time; resume holds more than one entry",
            );
        }
        if !users.is_empty() || !tools.is_empty() {
            return refuse("an input that resumes an interrupt cannot also bring new messages");
        }
        return Ok((Ask::Resume(entry.clone()), Vec::new()));
    }
    if !tools.is_empty() {
        if !users.is_empty() {
            return refuse("send the tool results first; a new message can follow once the run they resume ends");
        }
        return Ok((Ask::ToolResults(tools.clone()), tools));
    }
    match users.len() {
        1 => Ok((Ask::Message(users[0].clone()), users)),
        0 => {
            let status = state.store.session(session).await?.map(|row| row.status);
            if status == Some(SessionStatus::AwaitingInput) {
                return refuse("the thread waits on an interrupt: answer it with `resume` (or, for the client's tool calls, `tool` messages)");
            }
            refuse("nothing to run: the input has no new user message, tool result or resume")
        }
        n => Err(ApiError::InvalidMessage(format!(
            "one new user message starts a run; this input has {n} the thread does not hold"
        ))),
    }
}

/// The pending interrupt of the client's tool calls.
async fn client_tools_interrupt<S: Store>(
    state: &AppState<S>,
    session: SessionId,
) -> Result<String, ApiError> {
    let pending = state.store.pending_interrupts(session).await?;
    pending
        .into_iter()
        .find(|row| row.interrupt.reason == CLIENT_TOOLS)
        .map(|row| row.id)
        .ok_or_else(|| {
            ApiError::InvalidMessage(
                "the input has tool results, but no call of this thread waits for one".into(),
            )
        })
}

/// The answer the client's `tool` messages make.
fn results_payload(results: &[InputMessage]) -> Result<Value, ApiError> {
    let mut out = Vec::with_capacity(results.len());
    for message in results {
        let mut content = message.text()?;
        if let (true, Some(error)) = (content.is_empty(), &message.error) {
            content = json!({ "error": error }).to_string();
        }
        out.push(json!({
            "toolCallId": message.tool_call_id,
            "content": content,
            "messageId": message.id,
        }));
    }
    Ok(json!({ "results": out }))
}

/// The input as the run's `RUN_STARTED.input` records it: only its new messages, and no
/// `null` fields (AG-UI clients refuse them).
fn recorded_input(mut raw: Map<String, Value>, new_messages: Vec<InputMessage>) -> Value {
    let ids: Vec<&str> = new_messages.iter().map(|m| m.id.as_str()).collect();
    let messages: Vec<Value> = raw
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|m| m["id"].as_str().is_some_and(|id| ids.contains(&id)))
        .cloned()
        .collect();
    raw.insert("messages".into(), Value::Array(messages));
    raw.retain(|_, value| !value.is_null());
    for (key, empty) in [
        ("tools", json!([])),
        ("context", json!([])),
        ("state", json!({})),
        ("forwardedProps", json!({})),
    ] {
        raw.entry(key).or_insert(empty);
    }
    Value::Object(raw)
}

/// A refusal because a run is active says where to watch it: the session's socket,
/// from just before that run started.
fn watch_hint(error: ApiError, session: SessionId, known: &Known) -> ApiError {
    match error {
        ApiError::RunActive => {
            let after = known.last_run_start.map_or(0, |seq| seq - 1);
            ApiError::RunActiveOnThread(json!({
                "watch": format!("/api/sessions/{session}/ws?after={after}"),
                "after": after,
            }))
        }
        other => other,
    }
}
