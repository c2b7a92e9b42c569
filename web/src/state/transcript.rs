//! The transcript fold: AG-UI events in `seq` order become an ordered list of items.
//!
//! It owns the page's model of a session's history — messages, reasoning spans, tool
//! calls, interrupt cards (questions and tool approvals, answered by their tool result or
//! `CUSTOM tandem.tool_approval` record), run errors and cancel markers — keyed by stable
//! ids, plus whether a run is active or a question is waiting. It also marks the answer a
//! restart cut off and the last answer of a stopped run, which the page offers to
//! continue (`transcript_runs.rs`). [`Transcript::apply`]
//! reports which items an event touched so the view re-renders only those. It is pure Rust
//! with no signals or DOM, so `cargo test -p tandem-web` checks it on the host.

use std::collections::HashMap;

use shared::attachments::MessageAttachments;

use shared::run_input::{input_messages, InputMessage};
use shared::state::SharedState;
use shared::timeline::{RunTimeline, Timeline};
use shared::usage::{CallUsage, UsageTotals};
use shared::{Event, EventBody, TextRole};

use self::runs::ModelCall;
use super::approval::TOOL_APPROVAL_EVENT;
use super::item::{Item, ItemBody, RunState};

/// The key of a run's usage row is this and the run's id.
pub const USAGE_KEY: &str = "usage:";

/// The folded history of one session.
#[derive(Debug, Default)]
pub struct Transcript {
    items: Vec<Item>,
    /// Each run's model calls, tool calls and waits with their times (a run's Timeline).
    timeline: Timeline,
    /// The seq of the event that created each item (parallel to `items`).
    born: Vec<u64>,
    index: HashMap<String, usize>,
    /// Reasoning message id → index of its span's item.
    reasoning: HashMap<String, usize>,
    /// `request_input` calls not shown as tool cards: call id → args so far.
    hidden_calls: HashMap<String, String>,
    /// Interrupts waiting for an answer: tool call id (the `request_input` call, or the
    /// call awaiting approval), or `interrupt:{id}` for a wait of the run's own (its
    /// budget) → item index.
    pending: HashMap<String, usize>,
    /// Items still streaming or running, closed when the run ends.
    open: Vec<usize>,
    running: bool,
    /// The run's place in line while it waits for a run slot (`tandem.run_queued` is its
    /// latest event); any later event means it has one.
    queued: Option<u64>,
    /// Usage of every model call in the session, and of the active (or last) run's.
    usage: UsageTotals,
    run_usage: UsageTotals,
    last_seq: u64,
    /// The model the person last picked (`CUSTOM tandem.model_selected`).
    model: Option<String>,
    /// Where the active (or last) run's items begin.
    run_from: usize,
    /// The active (or last) run's id.
    run_id: Option<String>,
    /// The run each answer belongs to, by the answer's item key.
    answer_runs: HashMap<String, String>,
    /// Each run's latest answer (its item index).
    last_answers: HashMap<String, usize>,
    /// The active run's latest model call, for telling what a restart cut off.
    model_call: Option<ModelCall>,
    /// The answer marked continuable (the last of a stopped run), until a run starts.
    continuable: Option<usize>,
    /// The last run that was stopped, until a Continue joins it.
    stopped: Option<runs::Stopped>,
    /// The answer the active run continues, until its first answer writes into it.
    joining: Option<usize>,
    /// The answer the active (or last) run continues, if it continues one.
    run_continues: Option<usize>,
    /// The active run has done more than carry a note: it called the model, wrote or
    /// continues a message.
    run_worked: bool,
    /// The latest summary of the turns before the model's view
    /// (`CUSTOM tandem.context_summary`): the person's message it stands before, and it.
    summary: Option<(usize, String)>,
    /// The shared state (`STATE_SNAPSHOT`, `STATE_DELTA`).
    state: SharedState,
    /// Tool calls' progress activities: activity message id → the call's item index.
    activities: HashMap<String, usize>,
    /// The instructions the model is given (`CUSTOM tandem.instructions`).
    instructions: Instructions,
}

/// The instructions the log holds, as the latest of each scope says (empty: none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    /// The person's own, as the line's runs last recorded them.
    pub person: String,
    /// The conversation's own.
    pub conversation: String,
}

impl Transcript {
    /// The items in order.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// Where a run's time went, as the log read so far says (`None` for a run not seen).
    pub fn run_timeline(&self, run_id: &str) -> Option<RunTimeline> {
        let runs = self.timeline.runs();
        runs.iter().rev().find(|run| run.run_id == run_id).cloned()
    }

    /// The run the answer with this item key belongs to.
    pub fn run_of(&self, key: &str) -> Option<&str> {
        self.answer_runs.get(key).map(String::as_str)
    }

    /// The shared state as the log has it so far.
    pub fn shared_state(&self) -> &serde_json::Value {
        self.state.document()
    }

    /// The instructions the model is given, as the log holds them.
    pub fn instructions(&self) -> &Instructions {
        &self.instructions
    }

    /// The last run, if it was stopped and its answer can be continued.
    pub fn stopped_run(&self) -> Option<&str> {
        self.continuable?;
        self.stopped.as_ref().map(|stopped| stopped.run_id.as_str())
    }

    /// The model the person last picked for the session, if any.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The highest `seq` folded so far.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// The active run's place in line while it waits for a slot on the server.
    pub fn queued(&self) -> Option<u64> {
        self.queued.filter(|_| self.running)
    }

    /// Usage of every model call in the session so far.
    pub fn usage(&self) -> UsageTotals {
        self.usage
    }

    /// The active run's usage so far (`None` between runs).
    pub fn run_usage(&self) -> Option<UsageTotals> {
        self.running.then_some(self.run_usage)
    }

    /// Whether what waits is only an AG-UI client's own tool calls (the person has
    /// nothing to answer; the client app returns their results).
    pub fn waiting_for_client(&self) -> bool {
        !self.running
            && !self.pending.is_empty()
            && self
                .pending
                .values()
                .all(|&at| matches!(self.items[at].body, ItemBody::ToolCall(_)))
    }

    /// Whether a run is active or a question is waiting.
    pub fn run_state(&self) -> RunState {
        if self.running {
            RunState::Running
        } else if !self.pending.is_empty() {
            RunState::Awaiting
        } else {
            RunState::Idle
        }
    }

    /// Folds one logged event and returns the indices of the items it created or changed.
    /// An event with `seq` at or below the last folded one is ignored (a defensive dedupe).
    pub fn apply(&mut self, seq: u64, event: &Event) -> Vec<usize> {
        if seq <= self.last_seq {
            return Vec::new();
        }
        self.last_seq = seq;
        self.timeline.observe(seq, event);
        self.state.observe(seq, &event.body);
        self.queued = match &event.body {
            EventBody::Custom { name, value } if name == shared::custom::RUN_QUEUED => {
                Some(value.get("position").and_then(|p| p.as_u64()).unwrap_or(1))
            }
            _ => None,
        };
        self.follow_model_call(&event.body);
        // A run that only carries a note (a rating, a change of the state) leaves a stopped
        // answer continuable; one that works does not.
        let mut touched = match self.running && !self.run_worked && runs::works(&event.body) {
            true => {
                self.run_worked = true;
                self.clear_continuable()
            }
            false => Vec::new(),
        };
        touched.extend(self.apply_event(seq, &event.body));
        touched
    }

    fn apply_event(&mut self, seq: u64, body: &EventBody) -> Vec<usize> {
        match body {
            EventBody::RunStarted { input, run_id, .. } => {
                self.running = true;
                self.run_worked = false;
                self.run_id = Some(run_id.clone());
                self.run_usage = UsageTotals::default();
                self.run_from = self.items.len();
                self.model_call = None;
                self.joining = None;
                self.run_continues = None;
                let mut touched = self.input_messages(input.as_ref());
                if !touched.is_empty() {
                    self.run_worked = true;
                    touched.extend(self.clear_continuable());
                }
                touched
            }
            EventBody::RunFinished { outcome, .. } => self.run_finished(seq, outcome.as_ref()),
            EventBody::RunError { message, code } => {
                let mut touched = self.end_run();
                touched.push(self.push(
                    format!("error:{seq}"),
                    ItemBody::RunError {
                        message: message.clone(),
                        code: code.clone(),
                    },
                ));
                touched
            }
            EventBody::TextMessageStart {
                message_id, role, ..
            } => self.text_start(message_id, *role),
            EventBody::TextMessageContent { message_id, delta } => {
                self.append_text(message_id, delta)
            }
            EventBody::TextMessageEnd { message_id } => self.close(&format!("msg:{message_id}")),
            body => self.apply_inner(body),
        }
    }

    fn apply_inner(&mut self, body: &EventBody) -> Vec<usize> {
        match body {
            EventBody::Custom { name, .. } if name == shared::custom::RUN_RECOVERED => {
                self.recovered()
            }
            EventBody::Custom { name, value } if name == shared::custom::CONTINUE => {
                self.continues(value)
            }
            EventBody::Custom { name, value } if name == shared::custom::INSTRUCTIONS => {
                self.instructed(value)
            }
            EventBody::ReasoningStart { message_id } => vec![self.reasoning_start(message_id)],
            EventBody::ReasoningMessageStart { message_id, .. } => {
                self.reasoning_message_start(message_id)
            }
            EventBody::ReasoningMessageContent { message_id, delta } => {
                self.append_reasoning(message_id, delta)
            }
            EventBody::ReasoningEnd { message_id } => {
                self.close(&format!("reasoning:{message_id}"))
            }
            EventBody::ToolCallStart {
                tool_call_id,
                tool_call_name,
                ..
            } => self.tool_start(tool_call_id, tool_call_name),
            EventBody::ToolCallArgs {
                tool_call_id,
                delta,
            } => self.tool_args(tool_call_id, delta),
            EventBody::ToolCallResult {
                tool_call_id,
                content,
                ..
            } => self.tool_result(tool_call_id, content),
            EventBody::Custom { name, value } if name == TOOL_APPROVAL_EVENT => {
                self.approval_recorded(value)
            }
            EventBody::Custom { name, value } if name == shared::custom::BUDGET_DECISION => {
                self.budget_decided(value)
            }
            EventBody::ActivitySnapshot {
                message_id,
                activity_type,
                content,
                ..
            } => self.progress_snapshot(message_id, activity_type, content),
            EventBody::ActivityDelta {
                message_id, patch, ..
            } => self.progress_delta(message_id, patch),
            EventBody::Custom { name, value } if name == shared::custom::MODEL_SELECTED => {
                self.model = value
                    .get("model")
                    .and_then(|m| m.as_str())
                    .map(str::to_string);
                Vec::new()
            }
            EventBody::Custom { name, value } if name == shared::custom::MODEL_FALLBACK => {
                let model = |key: &str| value.get(key).and_then(|m| m.as_str()).unwrap_or("?");
                let text = format!(
                    "{} kept failing ({}); {} answered instead.",
                    model("from"),
                    model("code").replace('_', " "),
                    model("to")
                );
                vec![self.push(
                    format!("notice:{}", self.last_seq),
                    ItemBody::Notice {
                        text,
                        warning: true,
                    },
                )]
            }
            EventBody::Custom { name, value } if name == shared::custom::MCP_SERVER_UNAVAILABLE => {
                let text = value.get("message").and_then(|m| m.as_str());
                let text = text.unwrap_or("An MCP server is down.").to_string();
                vec![self.push(
                    format!("notice:{}", self.last_seq),
                    ItemBody::Notice {
                        text,
                        warning: true,
                    },
                )]
            }
            EventBody::Custom { name, value } if name == shared::custom::CONTEXT_SUMMARY => {
                let first = value.get("firstUserMessage").and_then(|n| n.as_u64());
                let text = value.get("summary").and_then(|t| t.as_str());
                self.summary = first.zip(text).map(|(n, t)| (n as usize, t.to_string()));
                Vec::new()
            }
            EventBody::Custom { name, value } if name == shared::custom::CONTEXT_TRIMMED => {
                let first = value.get("firstUserMessage").and_then(|n| n.as_u64());
                self.mark_view_start(first.unwrap_or(0) as usize)
            }
            EventBody::Custom { name, value } if name == shared::custom::ATTACHMENTS => {
                self.attachments_recorded(value)
            }
            EventBody::Custom { name, value } if name == shared::custom::FEEDBACK => {
                self.rated(value)
            }
            EventBody::Custom { name, value } if name == shared::custom::USAGE => {
                if let Ok(call) = serde_json::from_value::<CallUsage>(value.clone()) {
                    self.usage.add(&call);
                    self.run_usage.add(&call);
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// The messages an AG-UI client's input brought to the run (its `RUN_STARTED.input`
    /// carries them instead of text-message events).
    fn input_messages(&mut self, input: Option<&serde_json::Value>) -> Vec<usize> {
        let mut touched = Vec::new();
        for message in input_messages(input) {
            match message {
                InputMessage::User { id, text } => {
                    let key = format!("msg:{id}");
                    if !self.index.contains_key(&key) {
                        touched.push(self.push(
                            key,
                            ItemBody::User {
                                text,
                                view_start: false,
                                summary: None,
                                attachments: Vec::new(),
                            },
                        ));
                    }
                }
                InputMessage::ToolResult {
                    tool_call_id,
                    content,
                    ..
                } => touched.extend(self.tool_result(&tool_call_id, &content)),
            }
        }
        touched
    }

    /// The files and images of a message of the person's, or of a tool's result (`CUSTOM
    /// tandem.attachments`).
    fn attachments_recorded(&mut self, value: &serde_json::Value) -> Vec<usize> {
        let Ok(recorded) = serde_json::from_value::<MessageAttachments>(value.clone()) else {
            return Vec::new();
        };
        let key = match &recorded.tool_call_id {
            Some(call) => format!("tool:{call}"),
            None => format!("msg:{}", recorded.message_id),
        };
        let Some(&at) = self.index.get(&key) else {
            return Vec::new();
        };
        match &mut self.items[at].body {
            ItemBody::User { attachments, .. } => *attachments = recorded.attachments,
            ItemBody::ToolCall(call) => call.attachments = recorded.attachments,
            _ => return Vec::new(),
        }
        vec![at]
    }

    /// A rating of a run's answers (`CUSTOM tandem.feedback`): the latest stands.
    fn rated(&mut self, value: &serde_json::Value) -> Vec<usize> {
        // Read by hand: a derived deserialiser would cost the page's WASM more than this.
        let field = |name: &str| value.get(name).and_then(|v| v.as_str());
        let given = field("rating").and_then(shared::feedback::Rating::parse);
        let (Some(run), Some(given)) = (field("runId"), given) else {
            return Vec::new();
        };
        let Some(&at) = self.last_answers.get(run) else {
            return Vec::new();
        };
        match &mut self.items[at].body {
            ItemBody::Assistant { rating, .. } => {
                *rating = Some(given);
                vec![at]
            }
            _ => Vec::new(),
        }
    }

    /// Marks the person's `n`-th message (0: the first) as where the model's view begins,
    /// with the summary recorded for it if any, clearing the mark it had before; the
    /// first message carries none.
    fn mark_view_start(&mut self, n: usize) -> Vec<usize> {
        let mut touched = Vec::new();
        let mut users = 0;
        let text = self
            .summary
            .as_ref()
            .filter(|(first, _)| *first == n)
            .map(|(_, text)| text.clone());
        for (at, item) in self.items.iter_mut().enumerate() {
            if let ItemBody::User {
                view_start,
                summary,
                ..
            } = &mut item.body
            {
                let marked = users == n && n > 0;
                let shown = text.clone().filter(|_| marked);
                if *view_start != marked || *summary != shown {
                    *view_start = marked;
                    *summary = shown;
                    touched.push(at);
                }
                users += 1;
            }
        }
        touched
    }

    /// Applies a `CUSTOM tandem.instructions`; a change of the conversation's own after the
    /// first message is a line in the transcript, since the answers after it follow it.
    fn instructed(&mut self, value: &serde_json::Value) -> Vec<usize> {
        let text = value
            .get("text")
            .and_then(|t| t.as_str())
            .unwrap_or_default();
        match value.get("scope").and_then(|s| s.as_str()) {
            Some("person") => self.instructions.person = text.to_string(),
            Some("conversation") => {
                self.instructions.conversation = text.to_string();
                if !self.items.is_empty() {
                    let text = match text.is_empty() {
                        true => "You removed this conversation's instructions.",
                        false => "You changed this conversation's instructions.",
                    };
                    let key = format!("notice:{}", self.last_seq);
                    let body = ItemBody::Notice {
                        text: text.into(),
                        warning: false,
                    };
                    return vec![self.push(key, body)];
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn push(&mut self, key: String, body: ItemBody) -> usize {
        let at = self.items.len();
        self.index.insert(key.clone(), at);
        self.items.push(Item { key, body });
        self.born.push(self.last_seq);
        at
    }

    /// The key of the first item an event after `seq` created (where a branch that parts
    /// at `seq` begins to differ), if any.
    pub fn first_key_after(&self, seq: u64) -> Option<&str> {
        let at = self.born.partition_point(|&born| born <= seq);
        self.items.get(at).map(|item| item.key.as_str())
    }

    fn text_start(&mut self, message_id: &str, role: Option<TextRole>) -> Vec<usize> {
        let key = format!("msg:{message_id}");
        if self.index.contains_key(&key) {
            return Vec::new();
        }
        if role != Some(TextRole::User) {
            if let Some(at) = self.join_answer(&key) {
                return vec![at];
            }
        }
        let body = match role {
            Some(TextRole::User) => ItemBody::User {
                text: String::new(),
                view_start: false,
                summary: None,
                attachments: Vec::new(),
            },
            _ => ItemBody::Assistant {
                text: String::new(),
                streaming: true,
                interrupted: false,
                continuable: false,
                rating: None,
                last_of_run: true,
            },
        };
        let mut touched = Vec::new();
        if let (ItemBody::Assistant { .. }, Some(run)) = (&body, &self.run_id) {
            self.answer_runs.insert(key.clone(), run.clone());
            // The run's earlier answer is no longer its last (nor the one rated).
            let earlier = self.last_answers.insert(run.clone(), self.items.len());
            if let Some(ItemBody::Assistant { last_of_run, .. }) =
                earlier.map(|at| &mut self.items[at].body)
            {
                *last_of_run = false;
                touched.extend(earlier);
            }
        }
        let at = self.push(key, body);
        self.open.push(at);
        touched.push(at);
        touched
    }

    fn append_text(&mut self, message_id: &str, delta: &str) -> Vec<usize> {
        let key = format!("msg:{message_id}");
        let mut touched = match self.index.get(&key) {
            Some(_) => Vec::new(),
            None => self.text_start(message_id, None),
        };
        let at = self.index[&key];
        if let ItemBody::User { text, .. } | ItemBody::Assistant { text, .. } =
            &mut self.items[at].body
        {
            text.push_str(delta);
        }
        touched.push(at);
        touched
    }

    fn reasoning_start(&mut self, span_id: &str) -> usize {
        let body = ItemBody::Reasoning {
            text: String::new(),
            streaming: true,
        };
        let at = self.push(format!("reasoning:{span_id}"), body);
        self.open.push(at);
        at
    }

    fn reasoning_message_start(&mut self, message_id: &str) -> Vec<usize> {
        // The message belongs to the latest span still open; a stray one gets its own span.
        let span = self.open.iter().rev().copied().find(|&at| {
            matches!(
                self.items[at].body,
                ItemBody::Reasoning {
                    streaming: true,
                    ..
                }
            )
        });
        let (at, mut touched) = match span {
            Some(at) => (at, Vec::new()),
            None => {
                let at = self.reasoning_start(&format!("orphan-{message_id}"));
                (at, vec![at])
            }
        };
        if let ItemBody::Reasoning { text, .. } = &mut self.items[at].body {
            if !text.is_empty() {
                text.push_str("\n\n");
                touched.push(at);
            }
        }
        self.reasoning.insert(message_id.to_string(), at);
        touched
    }

    fn append_reasoning(&mut self, message_id: &str, delta: &str) -> Vec<usize> {
        let mut touched = match self.reasoning.get(message_id) {
            Some(_) => Vec::new(),
            None => self.reasoning_message_start(message_id),
        };
        let at = self.reasoning[message_id];
        if let ItemBody::Reasoning { text, .. } = &mut self.items[at].body {
            text.push_str(delta);
        }
        touched.push(at);
        touched
    }

    /// Marks a streaming item finished.
    fn close(&mut self, key: &str) -> Vec<usize> {
        let Some(&at) = self.index.get(key) else {
            return Vec::new();
        };
        self.open.retain(|&open| open != at);
        match &mut self.items[at].body {
            ItemBody::Assistant { streaming, .. } | ItemBody::Reasoning { streaming, .. } => {
                *streaming = false;
                vec![at]
            }
            _ => Vec::new(),
        }
    }

    /// Ends the active run: anything still streaming is closed, unanswered tool calls
    /// are marked abandoned, and the run's usage (if its model reported any) gets a
    /// footer row.
    fn end_run(&mut self) -> Vec<usize> {
        self.running = false;
        let mut open = std::mem::take(&mut self.open);
        for &at in &open {
            match &mut self.items[at].body {
                ItemBody::Assistant { streaming, .. } | ItemBody::Reasoning { streaming, .. } => {
                    *streaming = false
                }
                ItemBody::ToolCall(call) if call.result.is_none() => call.abandoned = true,
                _ => {}
            }
        }
        if self.run_usage.calls > 0 {
            let usage = std::mem::take(&mut self.run_usage);
            // Keyed by its run: the row's Timeline finds the run by it.
            let key = match &self.run_id {
                Some(run) => format!("{USAGE_KEY}{run}"),
                None => format!("{USAGE_KEY}{}", self.last_seq),
            };
            open.push(self.push(key, ItemBody::Usage(usage)));
        }
        open
    }
}

#[path = "transcript_calls.rs"]
mod calls;

#[path = "transcript_runs.rs"]
mod runs;

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
