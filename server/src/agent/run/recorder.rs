//! The run's pen: turns what the loop decides into committed AG-UI events.
//!
//! Every `emit` goes through the log writer. The token path is pipelined: a batch that
//! carries content (text, reasoning, tool-call arguments) is handed to the writer without
//! awaiting its commit, so one run streams at the writer's pace rather than one commit per
//! token; at most [`MAX_IN_FLIGHT`] such batches are uncommitted at once, and none while
//! the writer's queue is longer than [`PIPELINE_BACKLOG`]. Every other
//! event (a step, a tool call's end or result, a pause, the end of the run) first awaits
//! everything before it and its own commit, so nothing acts on an uncommitted event and
//! a failed commit ends the run at its next await. Viewers still get an event only after
//! its commit (the writer publishes). It tracks what is open to close it on any abnormal
//! end, and maps engine deltas to the right start/content/end events.

use std::collections::VecDeque;

use shared::usage::CallUsage;
use shared::{EncryptedSubtype, Event, EventBody, ReasoningRole, TextRole, TokenUsage};

use super::open_items::OpenItems;
use crate::agent::conversation::REDACTED_PREFIX;
use crate::domain::{new_id, now_ms, SessionId};
use crate::eventlog::{InFlight, StreamId, WriteError, Writer};
use crate::store::{Applied, Command, Guard, LogEntry, Rejection, StateRead};

/// Why a run stops writing.
#[derive(Debug, thiserror::Error)]
pub enum RunAbort {
    #[error("the session was deleted")]
    SessionGone,
    #[error("another instance took the run over")]
    LeaseLost,
    #[error("the run reached its limit of {0} events")]
    EventLimit(u64),
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The process is stopping: the run stopped at a safe point with everything it sent
    /// committed, and continues at the next start or on another instance.
    #[error("the process is stopping")]
    Halted,
}

/// Content batches a run may have handed to the writer without their commit.
pub const MAX_IN_FLIGHT: usize = 64;
/// The writer's queue beyond which runs stop pipelining and await each commit again: when
/// the writer is behind, more in flight only lengthens its queue (everyone's latency)
/// without adding throughput, since a batch already holds several tokens per session.
pub const PIPELINE_BACKLOG: usize = crate::eventlog::MAX_BATCH / 2;

/// A batch handed to the writer, its commit not yet seen.
struct Sent {
    outcome: InFlight,
    /// Its events that open or close something (content deltas left out).
    structural: Vec<EventBody>,
}

/// Records one run's events.
pub struct Recorder {
    writer: Writer,
    session: SessionId,
    run_id: String,
    /// What is open counting every event sent (what the next events build on).
    open: OpenItems,
    /// What is open counting only committed events (what an abnormal end closes).
    committed: OpenItems,
    /// Sent batches, oldest first; the writer applies them in this order.
    in_flight: VecDeque<Sent>,
    /// The run's stream of appends; a fresh one after a failure.
    stream: StreamId,
    /// The assistant message of the current model call (parent of its tool calls).
    message_id: String,
    /// Tokens the run's model calls used, as far as the provider reported them.
    usage: Option<TokenUsage>,
    /// The current model call's usage, not yet logged.
    call_usage: Option<CallUsage>,
    /// Events this run may append (`None` once lifted to close the run).
    max_events: Option<u64>,
    /// Events this run has appended.
    emitted: u64,
}

impl Recorder {
    /// A recorder for `run_id` in `session` that appends at most `max_events` events.
    pub fn new(writer: Writer, session: SessionId, run_id: String, max_events: u64) -> Self {
        Self {
            writer,
            session,
            run_id,
            open: OpenItems::default(),
            committed: OpenItems::default(),
            in_flight: VecDeque::new(),
            stream: StreamId::fresh(),
            message_id: new_id("msg"),
            usage: None,
            call_usage: None,
            max_events: Some(max_events),
            emitted: 0,
        }
    }

    /// Lets the run append past its event limit, to close what is open and end.
    pub fn lift_event_limit(&mut self) {
        self.max_events = None;
    }

    /// Adds one model call's usage (priced) to the run's; it is logged as
    /// `CUSTOM tandem.usage` by [`Self::usage_event`] when the call ends.
    pub fn add_usage(&mut self, call: CallUsage) {
        let total = self.usage.get_or_insert_with(TokenUsage::default);
        let add = |sum: &mut Option<u64>, more: u64| *sum = Some(sum.unwrap_or(0) + more);
        add(&mut total.input_tokens, call.input_tokens);
        add(&mut total.output_tokens, call.output_tokens);
        add(&mut total.reasoning_tokens, call.reasoning_tokens);
        total.provider = call.provider.clone().or(total.provider.take());
        total.model = call.model.clone().or(total.model.take());
        self.call_usage = Some(call);
    }

    /// Notes how many failed attempts the provider client retried before the current
    /// model call's answer, in its usage (when it reported any).
    pub fn retried(&mut self, retries: u32) {
        if let Some(call) = self.call_usage.as_mut() {
            call.retries = retries;
        }
    }

    /// Notes why the current model call's model stopped, in its usage (when it reported
    /// any).
    pub fn finished_because(&mut self, reason: &str) {
        if let Some(call) = self.call_usage.as_mut() {
            call.finish_reason = Some(reason.to_string());
        }
    }

    /// The current model call's usage, as its provider reported it so far.
    pub fn call_usage(&self) -> Option<&CallUsage> {
        self.call_usage.as_ref()
    }

    /// The `CUSTOM tandem.usage` event of the call that just ended, once.
    pub fn usage_event(&mut self) -> Option<EventBody> {
        let call = self.call_usage.take()?;
        Some(EventBody::Custom {
            name: shared::custom::USAGE.into(),
            value: serde_json::to_value(call).unwrap_or_default(),
        })
    }

    /// The run's token usage so far, if any model call reported it.
    pub fn usage(&self) -> Option<TokenUsage> {
        self.usage.clone()
    }

    /// The session this run belongs to.
    pub fn session(&self) -> SessionId {
        self.session
    }

    /// The session's id as an AG-UI thread id.
    pub fn thread_id(&self) -> String {
        self.session.to_string()
    }

    /// This run's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Appends events in one command. A batch with content returns once the writer has it
    /// (and no more than [`MAX_IN_FLIGHT`] batches are uncommitted); any other returns once
    /// it and everything before it are committed.
    pub async fn emit_all(&mut self, bodies: Vec<EventBody>) -> Result<(), RunAbort> {
        if bodies.is_empty() {
            return self.settle_down_to(0).await;
        }
        let count = bodies.len() as u64;
        if let Some(max) = self.max_events.filter(|max| self.emitted + count > *max) {
            return Err(RunAbort::EventLimit(max));
        }
        let now = now_ms();
        let entries: Vec<LogEntry> = bodies
            .into_iter()
            .map(|b| LogEntry::new(Event::at(b, now)))
            .collect();
        // Only starts and ends change what is open; the token path (content deltas) copies
        // nothing here.
        let structural: Vec<EventBody> = entries
            .iter()
            .map(|entry| &entry.event.body)
            .filter(|body| !OpenItems::is_content(body))
            .cloned()
            .collect();
        let pipelined = structural.len() < entries.len();
        let command = Command {
            session: self.session,
            guard: Guard::Append,
            entries,
            state: None,
        };
        let outcome = match self.writer.send(command, self.stream).await {
            Ok(outcome) => outcome,
            Err(error) => return Err(self.broken(error.into())),
        };
        self.emitted += count;
        structural.iter().for_each(|body| self.open.observe(body));
        self.in_flight.push_back(Sent {
            outcome,
            structural,
        });
        let keep = if pipelined && self.writer.backlog() <= PIPELINE_BACKLOG {
            MAX_IN_FLIGHT
        } else {
            0
        };
        self.settle_down_to(keep).await
    }

    /// Awaits the oldest sent batches until at most `keep` are uncommitted.
    async fn settle_down_to(&mut self, keep: usize) -> Result<(), RunAbort> {
        while self.in_flight.len() > keep {
            let Some(sent) = self.in_flight.pop_front() else {
                break;
            };
            let abort = match sent.outcome.outcome().await {
                Ok(Applied::Committed { .. }) => {
                    sent.structural
                        .iter()
                        .for_each(|body| self.committed.observe(body));
                    continue;
                }
                Ok(Applied::Rejected(Rejection::LeaseLost)) => RunAbort::LeaseLost,
                Ok(Applied::Rejected(_)) => RunAbort::SessionGone,
                Err(error) => RunAbort::Write(error),
            };
            return Err(self.broken(abort));
        }
        Ok(())
    }

    /// Forgets what was sent after a refused or failed batch (the writer refuses the rest
    /// of the stream) and goes on from what is committed, on a fresh stream, so that
    /// closing the run builds on the log as it is.
    fn broken(&mut self, abort: RunAbort) -> RunAbort {
        self.in_flight.clear();
        self.open = self.committed.clone();
        self.stream = StreamId::fresh();
        abort
    }

    /// Appends events (nothing open among them) behind a guard of their own, after
    /// everything sent so far is committed; false if the guard refused them for any
    /// reason but the lease or the session.
    pub async fn emit_guarded(
        &mut self,
        guard: Guard,
        bodies: Vec<EventBody>,
    ) -> Result<bool, RunAbort> {
        self.emit_checked(guard, None, bodies).await
    }

    /// Appends events that change the shared state (nothing open among them), made from
    /// the state `read`, after everything sent so far is committed; false if a state
    /// event was appended since that state was read (the change is to be made again).
    pub async fn emit_state_change(
        &mut self,
        read: StateRead,
        bodies: Vec<EventBody>,
    ) -> Result<bool, RunAbort> {
        self.emit_checked(Guard::Append, Some(read), bodies).await
    }

    async fn emit_checked(
        &mut self,
        guard: Guard,
        state: Option<StateRead>,
        bodies: Vec<EventBody>,
    ) -> Result<bool, RunAbort> {
        self.settle().await?;
        let count = bodies.len() as u64;
        if let Some(max) = self.max_events.filter(|max| self.emitted + count > *max) {
            return Err(RunAbort::EventLimit(max));
        }
        let now = now_ms();
        let entries = bodies
            .iter()
            .map(|b| LogEntry::new(Event::at(b.clone(), now)))
            .collect();
        let command = Command {
            session: self.session,
            guard,
            entries,
            state,
        };
        match self.writer.submit(command).await {
            Ok(Applied::Committed { .. }) => {
                self.emitted += count;
                // A tool call's result among them closes the call.
                for body in &bodies {
                    self.open.observe(body);
                    self.committed.observe(body);
                }
                Ok(true)
            }
            Ok(Applied::Rejected(Rejection::LeaseLost)) => Err(self.broken(RunAbort::LeaseLost)),
            Ok(Applied::Rejected(Rejection::SessionMissing)) => {
                Err(self.broken(RunAbort::SessionGone))
            }
            Ok(Applied::Rejected(_)) => Ok(false),
            Err(error) => Err(self.broken(error.into())),
        }
    }

    /// Awaits the commit of everything sent so far.
    pub async fn settle(&mut self) -> Result<(), RunAbort> {
        self.settle_down_to(0).await
    }

    /// Appends one event, as [`Self::emit_all`] does.
    pub async fn emit(&mut self, body: EventBody) -> Result<(), RunAbort> {
        self.emit_all(vec![body]).await
    }

    /// Starts a model call: a fresh assistant message id and the step marker.
    pub async fn begin_model_call(&mut self, step_name: &str) -> Result<(), RunAbort> {
        self.message_id = new_id("msg");
        self.emit(EventBody::StepStarted {
            step_name: step_name.into(),
        })
        .await
    }

    /// The current model call's assistant message id.
    pub fn message_id(&self) -> &str {
        &self.message_id
    }

    /// A piece of answer text, opening the message (and closing reasoning) if needed.
    pub async fn text(&mut self, delta: String) -> Result<(), RunAbort> {
        let mut events = Vec::new();
        if self.open.text().is_none() {
            events.extend(self.open.closing_content());
            events.push(EventBody::TextMessageStart {
                message_id: self.message_id.clone(),
                role: Some(TextRole::Assistant),
                name: None,
            });
        }
        let message_id = self.open.text().unwrap_or(&self.message_id).to_string();
        events.push(EventBody::TextMessageContent { message_id, delta });
        self.emit_all(events).await
    }

    /// A piece of reasoning, opening a span and message (and closing text) if needed.
    pub async fn reasoning(&mut self, delta: String) -> Result<(), RunAbort> {
        let mut events = Vec::new();
        let message_id = match self.open.reasoning() {
            Some(id) => id.to_string(),
            None => {
                events.extend(self.open.closing_content());
                let (span, id) = (new_id("rsn"), new_id("rmsg"));
                events.extend(opening_reasoning(&span, &id));
                id
            }
        };
        events.push(EventBody::ReasoningMessageContent { message_id, delta });
        self.emit_all(events).await
    }

    /// Ends the open reasoning block, keeping the provider's signature if it gave one. A
    /// signature without streamed text (thinking the provider did not show) still gets a
    /// reasoning message of its own, so it can be sent back.
    pub async fn end_reasoning(&mut self, signature: Option<String>) -> Result<(), RunAbort> {
        let mut events = Vec::new();
        match (self.open.reasoning().map(str::to_string), signature) {
            (Some(id), Some(signature)) => events.push(encrypted(id, signature)),
            (None, Some(signature)) => {
                events.extend(self.open.closing_content());
                let (span, id) = (new_id("rsn"), new_id("rmsg"));
                events.extend(opening_reasoning(&span, &id));
                events.push(encrypted(id.clone(), signature));
                events.push(EventBody::ReasoningMessageEnd { message_id: id });
                events.push(EventBody::ReasoningEnd { message_id: span });
                return self.emit_all(events).await;
            }
            (_, None) => {}
        }
        events.extend(self.open.closing_content());
        self.emit_all(events).await
    }

    /// A reasoning block the provider sent encrypted: an empty reasoning message that
    /// carries the data (prefixed with [`REDACTED_PREFIX`]) to send back later.
    pub async fn redacted_reasoning(&mut self, data: String) -> Result<(), RunAbort> {
        let mut events = self.open.closing_content();
        let (span, id) = (new_id("rsn"), new_id("rmsg"));
        events.extend(opening_reasoning(&span, &id));
        events.push(encrypted(id.clone(), format!("{REDACTED_PREFIX}{data}")));
        events.push(EventBody::ReasoningMessageEnd { message_id: id });
        events.push(EventBody::ReasoningEnd { message_id: span });
        self.emit_all(events).await
    }

    /// Closes open text and reasoning.
    pub async fn close_content(&mut self) -> Result<(), RunAbort> {
        let events = self.open.closing_content();
        self.emit_all(events).await
    }

    /// Closes open text, reasoning and tool-call argument streams (not their results).
    pub async fn close_calls(&mut self) -> Result<(), RunAbort> {
        let events = self.open.closing_calls();
        self.emit_all(events).await
    }

    /// Closes everything still open; dangling tool calls get `why` as an error result.
    pub async fn close_all(&mut self, why: &str) -> Result<(), RunAbort> {
        let events = self.open.closing_all(why);
        self.emit_all(events).await
    }
}

/// The start of a reasoning span and its message.
fn opening_reasoning(span: &str, id: &str) -> [EventBody; 2] {
    [
        EventBody::ReasoningStart {
            message_id: span.into(),
        },
        EventBody::ReasoningMessageStart {
            message_id: id.into(),
            role: ReasoningRole::Reasoning,
        },
    ]
}

/// A reasoning message's encrypted value.
fn encrypted(entity_id: String, encrypted_value: String) -> EventBody {
    EventBody::ReasoningEncryptedValue {
        subtype: EncryptedSubtype::Message,
        entity_id,
        encrypted_value,
    }
}
