//! The reading of a session's log into [`RunTimeline`]s, one event at a time.

use std::collections::HashMap;

use serde_json::Value;

use super::{HumanWait, ItemDetail, ModelCall, RunEnd, RunTimeline, TimelineItem, ToolRun};
use crate::agui::{Event, EventBody, Outcome, TextRole};
use crate::custom;
use crate::usage::CallUsage;

/// The step name of a model call (`STEP_STARTED`).
const MODEL_CALL_STEP: &str = "model_call";
/// The reason of the wait for an AG-UI client's own tools.
const CLIENT_TOOLS: &str = "client_tools";

/// A tool call the model asked for, until its result.
#[derive(Debug, Clone)]
struct PendingTool {
    name: String,
    arguments: String,
    /// When it could start: the end of the model call that asked for it, or the approval.
    ready_ms: Option<i64>,
}

/// Where an item lives: its run's index and its own.
type At = (usize, usize);

/// The runs of one session's log read so far.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    runs: Vec<RunTimeline>,
    /// Keep message contents (the person's message, answers, tool arguments and results).
    content: bool,
    /// The model call of the open step.
    model: Option<At>,
    tools: HashMap<String, PendingTool>,
    /// Waits not yet answered, by interrupt id; and the tool calls they stand for.
    waits: HashMap<String, At>,
    wait_tools: HashMap<String, String>,
    /// When the last tool of the current run ended (tools run in order).
    tool_cursor_ms: i64,
    /// The latest timestamp seen (an event without one takes it).
    now_ms: i64,
    /// Whether the events read belong to the commit that started the run (its answers).
    starting: bool,
}

impl Timeline {
    /// An empty reading; with `content`, it keeps the texts OpenTelemetry may capture.
    pub fn new(content: bool) -> Self {
        Self {
            content,
            ..Self::default()
        }
    }

    /// The runs read so far, oldest first.
    pub fn runs(&self) -> &[RunTimeline] {
        &self.runs
    }

    /// The runs, taken.
    pub fn into_runs(self) -> Vec<RunTimeline> {
        self.runs
    }

    /// Reads the next event of the log.
    pub fn observe(&mut self, seq: u64, event: &Event) {
        let at = event.timestamp.unwrap_or(self.now_ms);
        self.now_ms = self.now_ms.max(at);
        // The events committed with a run's start share its time.
        let started_at = self.runs.last().map(|run| run.started_ms);
        let starting = std::mem::take(&mut self.starting) && started_at == Some(at);
        match &event.body {
            EventBody::RunStarted { run_id, .. } => self.run_started(seq, run_id, at),
            EventBody::RunFinished { outcome, .. } => self.run_finished(seq, outcome, at),
            EventBody::RunError { message, code } => {
                let end = RunEnd::Failed {
                    code: code.clone(),
                    message: message.clone(),
                };
                self.end_run(end, at, code.as_deref().or(Some(message)));
            }
            EventBody::StepStarted { step_name } if step_name == MODEL_CALL_STEP => {
                self.model = self.push(seq, at, ItemDetail::Model(ModelCall::default()));
            }
            EventBody::StepFinished { step_name } if step_name == MODEL_CALL_STEP => {
                if let Some(call) = self.model.take().and_then(|at| self.item(at)) {
                    call.end_ms = Some(at);
                }
                self.tool_cursor_ms = at;
                for tool in self.tools.values_mut() {
                    tool.ready_ms.get_or_insert(at);
                }
            }
            EventBody::Custom { name, value } => self.custom(seq, name, value, at, starting),
            EventBody::TextMessageStart {
                role: Some(TextRole::User),
                ..
            } => self.starting = starting,
            EventBody::TextMessageContent { delta, .. } => {
                self.chunk(at, Some(delta));
                self.starting = starting;
            }
            EventBody::TextMessageEnd { .. } => self.starting = starting,
            EventBody::ReasoningMessageContent { .. } => self.chunk(at, None),
            EventBody::ToolCallStart {
                tool_call_id,
                tool_call_name,
                ..
            } => {
                self.chunk(at, None);
                if let Some(ItemDetail::Model(call)) = self.model_detail() {
                    call.tool_calls += 1;
                }
                let tool = PendingTool {
                    name: tool_call_name.clone(),
                    arguments: String::new(),
                    ready_ms: None,
                };
                self.tools.insert(tool_call_id.clone(), tool);
            }
            EventBody::ToolCallArgs {
                tool_call_id,
                delta,
            } if self.content => {
                if let Some(tool) = self.tools.get_mut(tool_call_id) {
                    tool.arguments.push_str(delta);
                }
            }
            EventBody::ToolCallResult {
                tool_call_id,
                content,
                ..
            } => self.tool_result(seq, tool_call_id, content, at, starting),
            _ => {}
        }
        if let (true, Some(run)) = (self.content, self.runs.last_mut()) {
            if let (EventBody::TextMessageContent { delta, .. }, true) = (&event.body, starting) {
                run.input_text
                    .get_or_insert_with(String::new)
                    .push_str(delta);
            }
        }
    }

    fn run_started(&mut self, seq: u64, run_id: &str, at: i64) {
        self.runs.push(RunTimeline {
            run_id: run_id.to_string(),
            first_seq: seq,
            started_ms: at,
            ended_ms: None,
            end: RunEnd::Running,
            resumes_run_id: None,
            trace_parent: None,
            input_text: None,
            items: Vec::new(),
        });
        self.model = None;
        self.tool_cursor_ms = at;
        self.starting = true;
    }

    fn run_finished(&mut self, seq: u64, outcome: &Option<Outcome>, at: i64) {
        match outcome {
            Some(Outcome::Interrupt { interrupts }) => {
                for interrupt in interrupts {
                    let wait = HumanWait {
                        interrupt_id: interrupt.id.clone(),
                        reason: interrupt.reason.clone(),
                        ..HumanWait::default()
                    };
                    if let Some(place) = self.push(seq, at, ItemDetail::Wait(wait)) {
                        self.waits.insert(interrupt.id.clone(), place);
                        if let Some(call) = &interrupt.tool_call_id {
                            self.wait_tools.insert(call.clone(), interrupt.id.clone());
                        }
                    }
                }
                self.end_run(RunEnd::Paused, at, None);
            }
            Some(Outcome::Cancelled) => self.end_run(RunEnd::Cancelled, at, None),
            _ => self.end_run(RunEnd::Succeeded, at, None),
        }
    }

    /// Ends the current run; an open model call ends with it (with `error` if it failed).
    fn end_run(&mut self, end: RunEnd, at: i64, error: Option<&str>) {
        if let Some(call) = self.model.take().and_then(|place| self.item(place)) {
            call.end_ms = Some(at);
            if let (ItemDetail::Model(model), Some(error)) = (&mut call.detail, error) {
                model.error = Some(error.to_string());
            }
        }
        if let Some(run) = self.runs.last_mut() {
            run.ended_ms = Some(at);
            run.end = end;
        }
    }

    fn custom(&mut self, seq: u64, name: &str, value: &Value, at: i64, starting: bool) {
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
        match name {
            custom::USAGE => {
                let usage: Option<CallUsage> = serde_json::from_value(value.clone()).ok();
                if let Some(ItemDetail::Model(call)) = self.model_detail() {
                    call.usage = usage;
                }
            }
            custom::MODEL_FALLBACK => {
                let (from, to) = (text("from"), text("to"));
                if let Some(item) = self.model.and_then(|place| self.item(place)) {
                    item.end_ms = Some(at);
                    if let ItemDetail::Model(call) = &mut item.detail {
                        call.failed_model.clone_from(&from);
                        call.fallback_to.clone_from(&to);
                        call.error = text("code");
                    }
                }
                let next = ModelCall {
                    fallback_from: from,
                    ..ModelCall::default()
                };
                self.model = self.push(seq, at, ItemDetail::Model(next));
            }
            custom::TOOL_APPROVAL => {
                let approved = value.get("approved").and_then(Value::as_bool);
                let answer = if approved == Some(true) {
                    "approved"
                } else {
                    "rejected"
                };
                if let Some(id) = text("interruptId") {
                    self.answer(&id, answer, at);
                }
                if let (Some(call), Some(true)) = (text("toolCallId"), approved) {
                    if let Some(tool) = self.tools.get_mut(&call) {
                        tool.ready_ms = Some(at);
                    }
                }
            }
            custom::BUDGET_DECISION => {
                let go_on = value.get("continue").and_then(Value::as_bool) == Some(true);
                if let Some(id) = text("interruptId") {
                    self.answer(&id, if go_on { "continued" } else { "stopped" }, at);
                }
            }
            custom::TRACE_CONTEXT => {
                if let Some(run) = self.runs.last_mut() {
                    run.trace_parent = text("traceparent");
                }
            }
            _ => {}
        }
        // The customs committed with a run's start belong to it still.
        self.starting = starting;
    }

    fn tool_result(&mut self, seq: u64, call_id: &str, content: &str, at: i64, starting: bool) {
        let parsed: Option<Value> = serde_json::from_str(content).ok();
        let status = parsed
            .as_ref()
            .and_then(|v| v.get("status"))
            .and_then(Value::as_str);
        if let Some(interrupt) = self.wait_tools.remove(call_id) {
            if self.waits.contains_key(&interrupt) {
                // A question's answer is its call's result; an approval's rejection too.
                // A share link may hide the answer itself (`{"status": "hidden"}`).
                let answer = status
                    .filter(|status| matches!(*status, "cancelled" | "expired"))
                    .unwrap_or("resolved");
                self.answer(&interrupt, answer, at);
            }
        }
        if starting {
            // The results an AG-UI client's tools sent answer the wait for them.
            let client_waits: Vec<String> = self
                .waits
                .iter()
                .filter(|(_, place)| self.reason_of(**place) == Some(CLIENT_TOOLS))
                .map(|(id, _)| id.clone())
                .collect();
            for interrupt in client_waits {
                self.answer(&interrupt, "resolved", at);
            }
        }
        let Some(tool) = self.tools.remove(call_id) else {
            self.starting = starting;
            return;
        };
        self.starting = starting;
        if starting {
            // Written with the run's start: an answer (or a rejection), not a run of it.
            return;
        }
        let failed = parsed.as_ref().is_some_and(|v| v.get("error").is_some())
            || matches!(status, Some("expired" | "cancelled"));
        let start = tool.ready_ms.unwrap_or(at).max(self.tool_cursor_ms).min(at);
        let run = ToolRun {
            tool_call_id: call_id.to_string(),
            name: tool.name,
            failed,
            arguments: self.content.then_some(tool.arguments),
            result: self.content.then(|| content.to_string()),
        };
        if let Some(place) = self.push(seq, start, ItemDetail::Tool(run)) {
            if let Some(item) = self.item(place) {
                item.end_ms = Some(at);
            }
        }
        self.tool_cursor_ms = at;
    }

    /// Records the answer of a wait, in the run being read.
    fn answer(&mut self, interrupt: &str, answer: &str, at: i64) {
        let Some(place) = self.waits.remove(interrupt) else {
            return;
        };
        let paused = self.runs.get(place.0).map(|run| run.run_id.clone());
        let by = self.runs.last().map(|run| run.run_id.clone());
        if let Some(run) = self.runs.last_mut() {
            run.resumes_run_id = run.resumes_run_id.take().or(paused);
        }
        if let Some(item) = self.item(place) {
            item.end_ms = Some(at);
            if let ItemDetail::Wait(wait) = &mut item.detail {
                wait.answer = Some(answer.to_string());
                wait.answered_by_run_id = by;
            }
        }
    }

    /// Notes a streamed chunk of the open model call.
    fn chunk(&mut self, at: i64, text: Option<&str>) {
        let content = self.content;
        if let Some(ItemDetail::Model(call)) = self.model_detail() {
            call.first_chunk_ms.get_or_insert(at);
            if let (true, Some(text)) = (content, text) {
                call.output_text
                    .get_or_insert_with(String::new)
                    .push_str(text);
            }
        }
    }

    fn push(&mut self, seq: u64, at: i64, detail: ItemDetail) -> Option<At> {
        let index = self.runs.len().checked_sub(1)?;
        let run = &mut self.runs[index];
        run.items.push(TimelineItem {
            first_seq: seq,
            start_ms: at,
            end_ms: None,
            detail,
        });
        Some((index, run.items.len() - 1))
    }

    fn item(&mut self, (run, item): At) -> Option<&mut TimelineItem> {
        self.runs.get_mut(run)?.items.get_mut(item)
    }

    fn reason_of(&self, (run, item): At) -> Option<&str> {
        match &self.runs.get(run)?.items.get(item)?.detail {
            ItemDetail::Wait(wait) => Some(&wait.reason),
            _ => None,
        }
    }

    fn model_detail(&mut self) -> Option<&mut ItemDetail> {
        let place = self.model?;
        self.item(place).map(|item| &mut item.detail)
    }
}
