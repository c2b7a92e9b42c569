//! AG-UI over HTTP: a `RunAgentInput` in, the run's events out as Server-Sent Events,
//! for any AG-UI client (`@ag-ui/client`'s `HttpAgent`, CopilotKit) without glue code.
//!
//! A thread is a session of its caller ([`session`]): a `threadId` that is one of the
//! caller's sessions names it, any other names the caller's own session of that thread,
//! so another user's thread answers exactly like an unknown one. What an input asks for
//! is read against the log ([`thread`]; an empty one for a thread with no session yet):
//! a new user message starts a run, `tool` messages answer the interrupt of the
//! client's tool calls, `resume` answers an interrupt. Everything is checked before
//! anything is written (the sizes of the free-form fields, [`limits`]; what the input
//! asks for; the message and its model; the caller's rates; room in the queue), and a
//! new thread's session is created only then: a refused input leaves nothing behind.
//! Each goes through the runner exactly as the REST routes do (the same guards,
//! idempotency and refusals), with what the run needs of the input recorded in its
//! `RUN_STARTED.input` ([`record`]). An input whose `runId` already started a run (a
//! client's retry) starts nothing and streams that run again. The response is the run's
//! [`RunFeed`], whose events carry the client's `threadId`.

mod binary;
mod feed;
pub mod input;
mod limits;
mod record;
mod session;
mod thread;

use serde_json::{json, Map, Value};
use shared::api::{RunAccepted, SessionStatus};
use shared::queue::WhileRunning;
use shared::ResumeStatus;

pub use feed::{RunFeed, KEEP_ALIVE};
use input::{InputMessage, ResumeEntry, RunAgentInput};
pub use limits::FieldLimits;
use session::ThreadSession;
use thread::Known;

use crate::agent::{NewMessage, Reply};
use crate::auth::Caller;
use crate::domain::{SessionId, UserId};
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
    /// The client's `threadId`, which every event of the feed carries.
    pub thread_id: String,
    pub run_id: String,
    pub after: u64,
    pub live: Subscription,
}

/// Checks the shared state a client sent (as the person's edits are checked), before
/// anything is written: an object within the state's rules, or nothing (`{}`, `null`:
/// the session's state stands).
fn check_state<S: Store>(state: &AppState<S>, raw: &Map<String, Value>) -> Result<(), ApiError> {
    let Some(sent) = raw.get("state").filter(|sent| !sent.is_null()) else {
        return Ok(());
    };
    if shared::state::is_empty(sent) {
        return Ok(());
    }
    state
        .runner
        .state_rules()
        .check(sent)
        .map_err(|problem| crate::agent::Refusal::InvalidState(problem).into())
}

/// Acts on an input for `caller`: starts or resumes the run the input asks for, making
/// the thread's session first if it is new.
pub async fn start<S: Store>(
    state: &AppState<S>,
    caller: &Caller,
    input: RunAgentInput,
    raw: Map<String, Value>,
) -> Result<Started, ApiError> {
    if !input.tools.is_empty() {
        // The caller's own tools are the server's too, for their runs.
        let tools = state.runner.tools_of(caller.user).await;
        for tool in &input.tools {
            if state.runner.is_server_tool(&tool.name) || tools.spec(&tool.name).is_some() {
                return Err(ApiError::InvalidMessage(format!(
                    "tool `{}` is one of the server's own tools (or yours); give the client's \
                     another name",
                    tool.name
                )));
            }
        }
    }
    state.limits.agui.check(&raw)?;
    check_state(state, &raw)?;
    let thread = session::find(state, caller, &input.thread_id).await?;
    let session = thread.id();
    let live = state.hub.subscribe(session);
    let known = match thread {
        ThreadSession::Existing(id) => Known::read(&*state.store, id).await?,
        ThreadSession::New(_) => Known::default(),
    };
    let started = |run_id: String, after: u64, live: Subscription| Started {
        session,
        thread_id: input.thread_id.clone(),
        run_id,
        after,
        live,
    };
    if let Some(run_id) = known.run_of_client(&input.run_id) {
        // The same input again (a client that retried): its run, from the start.
        return Ok(started(run_id.to_string(), known.before_run(run_id), live));
    }
    let (ask, new_messages) = ask(state, thread, &input, &known).await?;
    // A client may pick one of `GET /api/models` in `forwardedProps.model`, and what its
    // message does while a run is active in `forwardedProps.whileRunning`.
    let forwarded = |name: &str| {
        raw.get("forwardedProps")
            .and_then(|props| props.get(name))
            .and_then(Value::as_str)
    };
    let model = forwarded("model").map(str::to_string);
    let while_running = forwarded("whileRunning")
        .map(|name| {
            WhileRunning::parse(name).ok_or_else(|| {
                ApiError::InvalidMessage(format!(
                    "forwardedProps.whileRunning must be queue, interrupt, steer or reject, not `{}`",
                    name.chars().take(40).collect::<String>()
                ))
            })
        })
        .transpose()?;
    let recorded = record::recorded_input(&raw, &new_messages);
    let cost = Cost {
        bytes: limits::json_size(&recorded),
        new_session: matches!(thread, ThreadSession::New(_)),
    };
    let recorded = Some(recorded);
    // Runs wait for a slot in the line of the session's owner: the caller.
    let owner = caller.user;
    let accepted = match ask {
        Ask::Message(message) => {
            let parts = binary::parts(&message)?;
            let message = NewMessage {
                text: message.text()?,
                client_message_id: Some(message.id),
                input: recorded,
                model,
                while_running,
                message_id: None,
                attachments: binary::expected(&parts),
                fire: None,
                replay: None,
            };
            state.runner.check_message(&message, owner)?;
            cost.take(state, caller)?;
            match thread {
                ThreadSession::Existing(id) => {
                    let message = NewMessage {
                        while_running: Some(agui_mode(state, id, while_running).await?),
                        ..with_files(state, id, owner, message, parts).await?
                    };
                    let posted = state.runner.post_message(id, owner, message).await;
                    posted.map_err(ApiError::from)
                }
                ThreadSession::New(id) => first_run(state, caller, id, message, parts).await,
            }
        }
        Ask::ToolResults(results) => {
            let interrupt = client_tools_interrupt(state, thread).await?;
            let payload = results_payload(&results)?;
            cost.take(state, caller)?;
            let reply = Reply {
                interrupt_id: &interrupt,
                status: ResumeStatus::Resolved,
                payload: Some(payload),
                input: recorded,
            };
            answer(state, session, owner, reply).await
        }
        Ask::Resume(entry) => {
            if let ThreadSession::New(_) = thread {
                // A thread with no session has no interrupt to answer.
                return Err(ApiError::interrupt_not_found(&entry.interrupt_id));
            }
            cost.take(state, caller)?;
            let (interrupt_id, status) = (&entry.interrupt_id, entry.status);
            let (payload, input) = (entry.payload, recorded);
            let reply = Reply {
                interrupt_id,
                status,
                payload,
                input,
            };
            answer(state, session, owner, reply).await
        }
    };
    let RunAccepted {
        run_id, duplicate, ..
    } = accepted.map_err(|e| watch_hint(e, session, &known))?;
    let after = if duplicate {
        known.before_run(&run_id)
    } else {
        known.last_seq
    };
    Ok(started(run_id, after, live))
}

/// What an AG-UI client's message does while the thread is busy: what it asked for (else
/// `--while-running`), except that a thread waiting on an interrupt is answered with
/// `resume` (AG-UI's interrupt protocol), so a message that would wait for the answer is
/// refused with 409 `awaiting_input` instead of holding its stream open for a person;
/// `interrupt` declines the question and runs.
async fn agui_mode<S: Store>(
    state: &AppState<S>,
    session: SessionId,
    asked: Option<WhileRunning>,
) -> Result<WhileRunning, ApiError> {
    let mode = asked.unwrap_or(state.runner.while_running());
    if mode == WhileRunning::Interrupt || mode == WhileRunning::Reject {
        return Ok(mode);
    }
    let status = state.store.session(session).await?.map(|row| row.status);
    Ok(match status {
        Some(SessionStatus::AwaitingInput) => WhileRunning::Reject,
        _ => mode,
    })
}

/// What an input that starts or resumes a run takes from the caller's allowances: one
/// message, the bytes it adds to the log, and for a thread's first run one new session.
struct Cost {
    bytes: usize,
    new_session: bool,
}

impl Cost {
    fn take<S: Store>(&self, state: &AppState<S>, caller: &Caller) -> Result<(), ApiError> {
        state.rates.send_message(caller.user)?;
        state.rates.log_agui_input(caller.user, self.bytes)?;
        if self.new_session {
            state.rates.create_session(caller.user)?;
        }
        Ok(())
    }
}

/// The first run of a thread with no session: the session is made now that every check
/// has passed, and deleted again if the run cannot start after all.
async fn first_run<S: Store>(
    state: &AppState<S>,
    caller: &Caller,
    id: SessionId,
    message: NewMessage,
    parts: Vec<binary::BinaryPart>,
) -> Result<RunAccepted, ApiError> {
    let made = session::create(state, caller, id).await?;
    let accepted = async {
        let message = with_files(state, id, caller.user, message, parts).await?;
        let posted = state.runner.post_message(id, caller.user, message).await;
        posted.map_err(ApiError::from)
    };
    let accepted = accepted.await;
    if made && accepted.is_err() {
        session::discard(state, id).await;
    }
    accepted
}

/// `message` with the files of its binary parts stored in `session` (or found there), and
/// its recorded input naming them by id instead of carrying their bytes.
async fn with_files<S: Store>(
    state: &AppState<S>,
    session: SessionId,
    owner: crate::domain::UserId,
    message: NewMessage,
    parts: Vec<binary::BinaryPart>,
) -> Result<NewMessage, ApiError> {
    if parts.is_empty() {
        return Ok(message);
    }
    let attachments = binary::store(state, session, owner, parts).await?;
    let id = message.client_message_id.as_deref().unwrap_or_default();
    let input = message
        .input
        .map(|recorded| binary::recorded_with(recorded, id, &attachments));
    Ok(NewMessage {
        input,
        attachments,
        ..message
    })
}

/// What the input asks for, and the messages that ask it.
async fn ask<S: Store>(
    state: &AppState<S>,
    thread: ThreadSession,
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
            let status = match thread {
                ThreadSession::Existing(id) => state.store.session(id).await?.map(|r| r.status),
                ThreadSession::New(_) => None,
            };
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

/// Answers an interrupt of `session` for `owner`, whose line the resumed run waits in.
async fn answer<S: Store>(
    state: &AppState<S>,
    session: SessionId,
    owner: UserId,
    reply: Reply<'_>,
) -> Result<RunAccepted, ApiError> {
    let answers = state.runner.answers();
    answers
        .answer(session, owner, reply)
        .await
        .map_err(ApiError::from)
}

/// The pending interrupt of the client's tool calls (a thread with no session has none).
async fn client_tools_interrupt<S: Store>(
    state: &AppState<S>,
    thread: ThreadSession,
) -> Result<String, ApiError> {
    let pending = match thread {
        ThreadSession::Existing(id) => state.store.pending_interrupts(id).await?,
        ThreadSession::New(_) => Vec::new(),
    };
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
