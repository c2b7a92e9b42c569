//! The conversation a model sees, rebuilt from the session's event log.
//!
//! User messages, each model call's reasoning, text and tool calls (between the
//! `STEP_STARTED`/`STEP_FINISHED` of `model_call`), and tool results (including a
//! person's answers) become [`ChatMessage`]s. Reasoning keeps the provider's opaque
//! signatures (`REASONING_ENCRYPTED_VALUE`) so they can be sent back. The last turn's tool
//! calls that have no result yet are the run's pending calls; a person's approvals of them
//! (`CUSTOM tandem.tool_approval`) are collected too. For the model, a call without a
//! result gets a synthetic error result so every provider accepts the history. A run an
//! AG-UI client started carries the client's new messages (and tool results) and the
//! tools it declared in its `RUN_STARTED.input`. A run that continues a stopped answer
//! (`CUSTOM tandem.continue`) puts Tandem's word to go on ([`ChatMessage::Continue`])
//! after it.

use std::collections::HashMap;

use shared::run_input::{input_messages, InputMessage};
use shared::state::SharedState;
use shared::{Event, EventBody, TextRole};

use self::calls::{answer_every_call, pending_calls};
use super::attached::{self, Attached};
use super::run::approval::{Approval, APPROVAL_EVENT};
use super::run::client_tools;
use super::tools::ToolSpec;
pub use messages::{ChatMessage, ReasoningBlock, ToolCallRecord, REDACTED_PREFIX};

/// The step name Tandem wraps each model call in.
pub const MODEL_CALL_STEP: &str = "model_call";

/// The conversation and how many model calls produced it.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct History {
    pub messages: Vec<ChatMessage>,
    pub model_calls: u64,
    /// The tool calls of the last model turn, in order.
    pub turn_calls: Vec<ToolCallRecord>,
    /// The last turn's calls that have no result yet (none once a person wrote since).
    pub pending: Vec<ToolCallRecord>,
    /// A person's decisions on calls that needed approval, by tool call id.
    pub approvals: HashMap<String, Approval>,
    /// The tools the client of the latest run declared (AG-UI frontend tools).
    pub client_tools: Vec<ToolSpec>,
    /// The `context` entries the client of the latest run passed, if any.
    pub client_context: Option<serde_json::Value>,
    /// The model the person last picked (`CUSTOM tandem.model_selected`), if any.
    pub model: Option<String>,
    /// The instructions the model is given (`CUSTOM tandem.instructions`).
    pub instructions: super::instructions::Given,
    /// The person's message the model's view begins at, as last recorded
    /// (`CUSTOM tandem.context_trimmed`; 0 = the first).
    pub view_start: usize,
    /// The latest summary of the turns before the view (`CUSTOM tandem.context_summary`).
    pub summary: Option<ContextSummary>,
    /// The shared state (folded by [`Folded`] only, which knows the seqs).
    pub state: SharedState,
    /// The latest run has not yet said what the state is (no `STATE_SNAPSHOT` and no model
    /// call since its `RUN_STARTED`).
    pub snapshot_due: bool,
    /// The state an AG-UI client sent with the latest run's input, when not empty.
    pub input_state: Option<serde_json::Value>,
    /// Whether the person let the current run go on past its budget (only [`Folded`]
    /// knows; [`rebuild`] leaves it false).
    pub budget_overrun: bool,
    /// The replay trial this line is, if it is one (`CUSTOM tandem.replay`), with what it
    /// called since.
    pub replay: Option<ReplayTrial>,
}

/// A replay's trial as its log says: its mark, the ids of the tool calls it made since
/// (in order: a call's place is matched with the record's), and whether one already
/// differed from the record.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayTrial {
    pub mark: shared::replays::ReplayMark,
    pub calls: Vec<String>,
    pub diverged: bool,
}

/// A recorded summary of the conversation before the person's `first_user`-th message.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextSummary {
    pub first_user: usize,
    pub text: String,
}

/// The conversation as a person reads it: an answer and the continuation after Continue
/// are one answer (their text, reasoning and tool calls joined), and Tandem's word to go on
/// is not shown.
pub fn as_read(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::with_capacity(messages.len());
    let mut joining = false;
    for message in messages {
        match (message, joining, out.last_mut()) {
            (ChatMessage::Continue, _, _) => joining = true,
            (
                ChatMessage::Assistant {
                    reasoning,
                    text,
                    tool_calls,
                },
                true,
                Some(ChatMessage::Assistant {
                    reasoning: earlier_reasoning,
                    text: earlier_text,
                    tool_calls: earlier_calls,
                }),
            ) => {
                earlier_reasoning.extend(reasoning.iter().cloned());
                earlier_text.push_str(text);
                earlier_calls.extend(tool_calls.iter().cloned());
                joining = false;
            }
            (other, _, _) => {
                joining = false;
                out.push(other.clone());
            }
        }
    }
    out
}

/// Rebuilds the conversation from a session's whole log.
pub fn rebuild<'a>(events: impl IntoIterator<Item = &'a Event>) -> History {
    let mut fold = Fold::default();
    for event in events {
        fold.observe(&event.body);
    }
    fold.into_history()
}

/// A conversation folded from a session's log up to a seq, continued with newer events
/// only: a run reads and folds the whole log for its first model call, then only what
/// was appended since, so a model call in a long session does not cost the whole log.
#[derive(Default, Clone)]
pub struct Folded {
    fold: Fold,
    last_seq: u64,
    state: SharedState,
    snapshot_due: bool,
    input_state: Option<serde_json::Value>,
    /// Whether the person let the current run go on past its budget.
    budget_overrun: bool,
}

impl Folded {
    /// The last seq folded in (0 before any).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Folds in the event at `seq` (`None`: a row that is not an event, skipped).
    pub fn observe(&mut self, seq: u64, event: Option<&Event>) {
        if let Some(event) = event {
            self.fold.observe(&event.body);
            self.state.observe(seq, &event.body);
            match &event.body {
                EventBody::RunStarted { input, .. } => {
                    self.snapshot_due = true;
                    self.budget_overrun = false;
                    self.input_state = input
                        .as_ref()
                        .and_then(|input| input.get("state"))
                        .filter(|state| !shared::state::is_empty(state))
                        .cloned();
                }
                EventBody::StateSnapshot { .. } => self.snapshot_due = false,
                EventBody::Custom { name, value }
                    if super::budget::lets_run_overrun(name, value) =>
                {
                    self.budget_overrun = true
                }
                EventBody::StepStarted { step_name } if step_name == MODEL_CALL_STEP => {
                    self.snapshot_due = false
                }
                _ => {}
            }
        }
        self.last_seq = seq;
    }

    /// The conversation so far, as [`rebuild`] would make it from the same events, with
    /// the shared state.
    pub fn history(&self) -> History {
        let mut history = self.fold.clone().into_history();
        history.state = self.state.clone();
        history.snapshot_due = self.snapshot_due;
        history.input_state = self.input_state.clone();
        history.budget_overrun = self.budget_overrun;
        history
    }
}

#[derive(Default, Clone)]
struct Fold {
    history: History,
    user: Option<(String, String)>,
    /// Where each of the person's messages stands in the conversation, by message id
    /// (for the attachments recorded after it).
    user_messages: HashMap<String, usize>,
    assistant: Option<Turn>,
    tool_names: HashMap<String, String>,
}

/// The model turn being read.
#[derive(Default, Clone)]
struct Turn {
    reasoning: Vec<(String, ReasoningBlock)>,
    text: String,
    tool_calls: Vec<ToolCallRecord>,
}

impl Fold {
    fn observe(&mut self, body: &EventBody) {
        match body {
            EventBody::TextMessageStart {
                message_id,
                role: Some(TextRole::User),
                ..
            } => self.user = Some((message_id.clone(), String::new())),
            EventBody::TextMessageContent { message_id, delta } => {
                match (&mut self.user, &mut self.assistant) {
                    (Some((id, text)), _) if id == message_id => text.push_str(delta),
                    (_, Some(turn)) => turn.text.push_str(delta),
                    _ => {}
                }
            }
            EventBody::TextMessageEnd { message_id }
                if self.user.as_ref().is_some_and(|(id, _)| id == message_id) =>
            {
                let (id, text) = self.user.take().expect("checked by the guard");
                self.push_user(id, text);
            }
            EventBody::StepStarted { step_name } if step_name == MODEL_CALL_STEP => {
                self.history.model_calls += 1;
                self.assistant = Some(Turn::default());
            }
            EventBody::StepFinished { step_name } if step_name == MODEL_CALL_STEP => {
                self.finish_assistant()
            }
            EventBody::Custom { name, value } if name == shared::custom::MODEL_SELECTED => {
                self.history.model = value["model"].as_str().map(str::to_string);
            }
            EventBody::Custom { name, value } if name == shared::custom::CONTEXT_TRIMMED => {
                self.history.view_start = value["firstUserMessage"].as_u64().unwrap_or(0) as usize;
            }
            EventBody::Custom { name, value } if name == shared::custom::CONTEXT_SUMMARY => {
                self.history.summary = Some(ContextSummary {
                    first_user: value["firstUserMessage"].as_u64().unwrap_or(0) as usize,
                    text: value["summary"].as_str().unwrap_or_default().to_string(),
                });
            }
            EventBody::Custom { name, value } if name == shared::custom::ATTACHMENTS => {
                self.attach(value)
            }
            EventBody::Custom { name, value } if name == shared::custom::INSTRUCTIONS => {
                self.history.instructions.observe(value)
            }
            EventBody::Custom { name, value } if name == shared::custom::REPLAY => {
                self.history.replay =
                    serde_json::from_value(value.clone())
                        .ok()
                        .map(|mark| ReplayTrial {
                            mark,
                            calls: Vec::new(),
                            diverged: false,
                        });
            }
            EventBody::Custom { name, .. } if name == shared::custom::REPLAY_DIVERGED => {
                if let Some(trial) = &mut self.history.replay {
                    trial.diverged = true;
                }
            }
            EventBody::Custom { name, .. } if name == shared::custom::CONTINUE => {
                self.finish_assistant();
                self.history.messages.push(ChatMessage::Continue);
            }
            EventBody::Custom { name, value } if name == APPROVAL_EVENT => {
                if let Some(approval) = Approval::from_event(value) {
                    self.history
                        .approvals
                        .insert(approval.tool_call_id.clone(), approval);
                }
            }
            EventBody::ToolCallResult {
                tool_call_id,
                content,
                ..
            } => {
                self.finish_assistant();
                self.history.messages.push(ChatMessage::Tool {
                    tool_call_id: tool_call_id.clone(),
                    name: self
                        .tool_names
                        .get(tool_call_id)
                        .cloned()
                        .unwrap_or_default(),
                    content: content.clone(),
                });
            }
            EventBody::RunStarted { input, .. } => {
                self.history.client_tools = client_tools::declared(input.as_ref());
                self.history.client_context =
                    input.as_ref().and_then(|i| i.get("context")).cloned();
                for message in input_messages(input.as_ref()) {
                    self.input_message(message);
                }
            }
            EventBody::RunError { .. } | EventBody::RunFinished { .. } => self.finish_assistant(),
            other => self.observe_turn(other),
        }
    }

    /// A message an AG-UI client's input brought (recorded in `RUN_STARTED.input`).
    fn input_message(&mut self, message: InputMessage) {
        self.finish_assistant();
        let message = match message {
            InputMessage::User { id, text } => return self.push_user(id, text),
            InputMessage::ToolResult {
                tool_call_id,
                content,
                ..
            } => ChatMessage::Tool {
                name: self
                    .tool_names
                    .get(&tool_call_id)
                    .cloned()
                    .unwrap_or_default(),
                tool_call_id,
                content,
            },
        };
        self.history.messages.push(message);
    }

    /// A person's message, known by `id` for the attachments recorded after it.
    fn push_user(&mut self, id: String, text: String) {
        // A person writing in a trial's line makes the rest of it their own conversation.
        self.history.replay = None;
        self.user_messages.insert(id, self.history.messages.len());
        self.history.messages.push(ChatMessage::User {
            text,
            attachments: Vec::new(),
        });
    }

    /// The attachments of a message of the person's (`CUSTOM tandem.attachments`).
    fn attach(&mut self, value: &serde_json::Value) {
        let Some(recorded) = attached::from_event(value) else {
            return;
        };
        let at = self.user_messages.get(&recorded.message_id).copied();
        if let Some(ChatMessage::User { attachments, .. }) =
            at.and_then(|at| self.history.messages.get_mut(at))
        {
            *attachments = recorded
                .attachments
                .into_iter()
                .map(Attached::named)
                .collect();
        }
    }

    /// Reasoning and tool-call events of the model turn being read.
    fn observe_turn(&mut self, body: &EventBody) {
        if let EventBody::ToolCallStart {
            tool_call_id,
            tool_call_name,
            ..
        } = body
        {
            self.tool_names
                .insert(tool_call_id.clone(), tool_call_name.clone());
            if let Some(trial) = &mut self.history.replay {
                trial.calls.push(tool_call_id.clone());
            }
        }
        let Some(turn) = &mut self.assistant else {
            return;
        };
        match body {
            EventBody::ReasoningMessageStart { message_id, .. } => turn.reasoning.push((
                message_id.clone(),
                ReasoningBlock::Thinking {
                    text: String::new(),
                    signature: None,
                },
            )),
            EventBody::ReasoningMessageContent { message_id, delta } => {
                if let Some((_, ReasoningBlock::Thinking { text, .. })) =
                    turn.reasoning.iter_mut().find(|(id, _)| id == message_id)
                {
                    text.push_str(delta);
                }
            }
            EventBody::ReasoningEncryptedValue {
                entity_id,
                encrypted_value,
                ..
            } => {
                let Some((_, block)) = turn.reasoning.iter_mut().find(|(id, _)| id == entity_id)
                else {
                    return;
                };
                match (encrypted_value.strip_prefix(REDACTED_PREFIX), block) {
                    (Some(data), block) => *block = ReasoningBlock::Redacted { data: data.into() },
                    (None, ReasoningBlock::Thinking { signature, .. }) => {
                        *signature = Some(encrypted_value.clone())
                    }
                    (None, ReasoningBlock::Redacted { .. }) => {}
                }
            }
            EventBody::ToolCallStart {
                tool_call_id,
                tool_call_name,
                ..
            } => turn.tool_calls.push(ToolCallRecord {
                id: tool_call_id.clone(),
                name: tool_call_name.clone(),
                arguments: String::new(),
            }),
            EventBody::ToolCallArgs {
                tool_call_id,
                delta,
            } => {
                if let Some(call) = turn.tool_calls.iter_mut().find(|c| &c.id == tool_call_id) {
                    call.arguments.push_str(delta);
                }
            }
            _ => {}
        }
    }

    fn into_history(mut self) -> History {
        self.finish_assistant();
        self.history.pending = pending_calls(&self.history.messages);
        self.history.messages = answer_every_call(self.history.messages);
        self.history
    }

    fn finish_assistant(&mut self) {
        let Some(turn) = self.assistant.take() else {
            return;
        };
        let reasoning: Vec<ReasoningBlock> = turn
            .reasoning
            .into_iter()
            .map(|(_, block)| block)
            .filter(|block| match block {
                ReasoningBlock::Thinking { text, signature } => {
                    !text.is_empty() || signature.is_some()
                }
                ReasoningBlock::Redacted { data } => !data.is_empty(),
            })
            .collect();
        if reasoning.is_empty() && turn.text.is_empty() && turn.tool_calls.is_empty() {
            return;
        }
        self.history.turn_calls = turn.tool_calls.clone();
        self.history.messages.push(ChatMessage::Assistant {
            reasoning,
            text: turn.text,
            tool_calls: turn.tool_calls,
        });
    }
}

mod calls;
mod messages;
#[cfg(test)]
mod tests;
