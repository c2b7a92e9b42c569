//! A run's timeline as OpenTelemetry spans, named and attributed as the GenAI semantic
//! conventions (1.42.0) say: `invoke_agent`, `chat {model}`, `execute_tool {tool}`, and
//! Tandem's own `await_human` for a wait for a person.
//!
//! | span | parent | attributes |
//! |---|---|---|
//! | `invoke_agent tandem` | the caller's span (`traceparent`), else none | `gen_ai.operation.name`, `gen_ai.agent.name`, `gen_ai.conversation.id`, `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.usage.*`, `tandem.run.id`, `tandem.run.outcome`, `tandem.cost_usd`, `error.type`; a link to the run it resumes |
//! | `chat {model}` | its run | `gen_ai.operation.name`, `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.response.model`, `gen_ai.usage.input_tokens`, `…output_tokens`, `…cache_read.input_tokens`, `…reasoning.output_tokens`, `gen_ai.response.finish_reasons`, `gen_ai.response.time_to_first_chunk`, `tandem.cost_usd`, `tandem.fallback.from` / `.to`, `error.type` |
//! | `execute_tool {tool}` | its run | `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`, `error.type` |
//! | `await_human` | the run that paused | `tandem.interrupt.id`, `tandem.interrupt.reason`, `tandem.interrupt.answer`, `tandem.resumed_run.id` |
//!
//! With content capture on: `gen_ai.input.messages` (the person's message) on the run,
//! `gen_ai.output.messages` on each model call, `gen_ai.tool.call.arguments` and
//! `gen_ai.tool.call.result` on each tool call, scrubbed of credentials.

// The GenAI names are deprecated in the conventions crate only because they moved to
// their own repository (open-telemetry/semantic-conventions-genai); they are unchanged.
#![allow(deprecated)]

use std::borrow::Cow;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{Link, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceState};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use opentelemetry_semantic_conventions::attribute as semconv;
use serde_json::json;
use shared::timeline::{
    HumanWait, ItemDetail, ModelCall, RunEnd, RunTimeline, TimelineItem, ToolRun,
};

use super::context::parse_traceparent;
use super::ids;
use crate::scrub::Scrubber;

/// The agent's name in `gen_ai.agent.name`.
pub const AGENT_NAME: &str = "tandem";
/// The most characters of one message a span carries (content capture).
const MAX_CONTENT_CHARS: usize = 16_384;

/// Which session the runs belong to.
#[derive(Debug, Clone, Copy)]
pub struct SpanSource<'a> {
    pub session: &'a str,
}

/// Makes spans of runs.
#[derive(Debug, Clone)]
pub struct Spans {
    scope: InstrumentationScope,
    content: Option<Scrubber>,
}

/// Where a run's spans hang.
#[derive(Clone)]
struct RunPlace {
    context: SpanContext,
    /// The caller's span, when the run joined its trace.
    parent: Option<SpanContext>,
}

impl Spans {
    /// Spans in `scope`; with `content`, carrying message contents scrubbed by it.
    pub fn new(scope: InstrumentationScope, content: Option<Scrubber>) -> Self {
        Self { scope, content }
    }

    /// Whether spans carry message contents.
    pub fn captures_content(&self) -> bool {
        self.content.is_some()
    }

    /// The span of something that ended now: an HTTP request, with its own times.
    pub(super) fn finished(&self, shape: Shape) -> SpanData {
        self.span(shape)
    }

    /// The spans a run's end sends: the run and its model and tool calls (none while it
    /// runs, or when its caller's trace is not sampled), and the waits its start answered.
    pub fn of_run(
        &self,
        source: SpanSource<'_>,
        runs: &[RunTimeline],
        index: usize,
    ) -> Vec<SpanData> {
        let Some(run) = runs.get(index) else {
            return Vec::new();
        };
        let mut spans = Vec::new();
        for (paused, item) in answered_by(runs, &run.run_id) {
            spans.extend(self.wait(source, paused, runs, item));
        }
        if run.end == RunEnd::Running {
            return spans;
        }
        let place = place(source, run);
        if !place.context.is_sampled() {
            return spans;
        }
        spans.push(self.run(source, run, runs, &place));
        for item in &run.items {
            spans.extend(self.item(source, run, &place, item));
        }
        spans
    }

    /// Every span of a session's log: each run that ended, each wait that was answered
    /// (each by the run its answer started).
    pub fn of_session(&self, source: SpanSource<'_>, runs: &[RunTimeline]) -> Vec<SpanData> {
        (0..runs.len())
            .flat_map(|index| self.of_run(source, runs, index))
            .collect()
    }

    fn run(
        &self,
        source: SpanSource<'_>,
        run: &RunTimeline,
        runs: &[RunTimeline],
        place: &RunPlace,
    ) -> SpanData {
        let usage = run.usage();
        let first_model = run.items.iter().find_map(|item| match &item.detail {
            ItemDetail::Model(call) => Some(call),
            _ => None,
        });
        let mut attributes = vec![
            KeyValue::new(semconv::GEN_AI_OPERATION_NAME, "invoke_agent"),
            KeyValue::new(semconv::GEN_AI_AGENT_NAME, AGENT_NAME),
            KeyValue::new(semconv::GEN_AI_CONVERSATION_ID, source.session.to_string()),
            KeyValue::new("tandem.run.id", run.run_id.clone()),
            KeyValue::new("tandem.run.outcome", outcome(&run.end)),
        ];
        if let Some(call) = first_model {
            attributes.extend(provider_and_model(call));
        }
        if usage.calls > 0 {
            attributes.extend(tokens(usage.input_tokens, usage.output_tokens));
            attributes.push(KeyValue::new("tandem.cost_usd", usage.cost_usd));
        }
        if let (Some(scrubber), Some(text)) = (&self.content, &run.input_text) {
            let messages = json!([{"role": "user", "parts": [{"type": "text", "content": scrubber.clean_text(text, MAX_CONTENT_CHARS)}]}]);
            attributes.push(KeyValue::new(
                semconv::GEN_AI_INPUT_MESSAGES,
                messages.to_string(),
            ));
        }
        let status = match &run.end {
            RunEnd::Failed { code, message } => {
                attributes.push(KeyValue::new(
                    semconv::ERROR_TYPE,
                    code.clone().unwrap_or_else(|| "error".into()),
                ));
                Status::error(message.clone())
            }
            _ => Status::Unset,
        };
        let links = run
            .resumes_run_id
            .as_deref()
            .and_then(|paused| runs.iter().find(|r| r.run_id == paused))
            .map(|paused| {
                let context = self::place(source, paused).context;
                vec![Link::with_context(context)]
            })
            .unwrap_or_default();
        self.span(Shape {
            context: place.context.clone(),
            parent: place.parent.as_ref().map(|p| (p.span_id(), true)),
            kind: SpanKind::Internal,
            name: format!("invoke_agent {AGENT_NAME}").into(),
            start: at(run.started_ms),
            end: at(run.ended_ms.unwrap_or(run.started_ms).max(run.started_ms)),
            attributes,
            status,
            links,
        })
    }

    /// The span of a model or tool call (a wait goes out with the run that answered it).
    fn item(
        &self,
        source: SpanSource<'_>,
        run: &RunTimeline,
        place: &RunPlace,
        item: &TimelineItem,
    ) -> Option<SpanData> {
        let end_ms = item.end_ms?;
        let key = item.first_seq.to_string();
        let (name, kind, attributes, status) = match &item.detail {
            ItemDetail::Model(call) => self.chat(source, call, item.start_ms),
            ItemDetail::Tool(tool) => self.tool(source, tool),
            ItemDetail::Wait(_) => return None,
        };
        Some(self.span(Shape {
            context: child(place, ids::item_span(source.session, &run.run_id, &key)),
            parent: Some((place.context.span_id(), false)),
            kind,
            name,
            start: at(item.start_ms),
            end: at(end_ms.max(item.start_ms)),
            attributes,
            status,
            links: Vec::new(),
        }))
    }

    fn chat(
        &self,
        source: SpanSource<'_>,
        call: &ModelCall,
        start_ms: i64,
    ) -> (Cow<'static, str>, SpanKind, Vec<KeyValue>, Status) {
        let model = call.model().unwrap_or_default().to_string();
        let mut attributes = vec![
            KeyValue::new(semconv::GEN_AI_OPERATION_NAME, "chat"),
            KeyValue::new(semconv::GEN_AI_CONVERSATION_ID, source.session.to_string()),
        ];
        attributes.extend(provider_and_model(call));
        if let Some(usage) = &call.usage {
            if let Some(model) = &usage.model {
                attributes.push(KeyValue::new(semconv::GEN_AI_RESPONSE_MODEL, model.clone()));
            }
            attributes.extend(tokens(usage.input_tokens, usage.output_tokens));
            if usage.cached_input_tokens > 0 {
                attributes.push(KeyValue::new(
                    semconv::GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
                    usage.cached_input_tokens as i64,
                ));
            }
            if usage.reasoning_tokens > 0 {
                attributes.push(KeyValue::new(
                    semconv::GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
                    usage.reasoning_tokens as i64,
                ));
            }
            if let Some(reason) = &usage.finish_reason {
                let reasons = Value::Array(Array::String(vec![StringValue::from(reason.clone())]));
                attributes.push(KeyValue::new(
                    semconv::GEN_AI_RESPONSE_FINISH_REASONS,
                    reasons,
                ));
            }
            if let Some(cost) = usage.cost_usd {
                attributes.push(KeyValue::new("tandem.cost_usd", cost));
            }
            if usage.retries > 0 {
                attributes.push(KeyValue::new("tandem.retries", i64::from(usage.retries)));
            }
        }
        if let Some(first) = call.first_chunk_ms {
            let seconds = (first - start_ms).max(0) as f64 / 1000.0;
            attributes.push(KeyValue::new(
                semconv::GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
                seconds,
            ));
        }
        if let Some(from) = &call.fallback_from {
            attributes.push(KeyValue::new("tandem.fallback.from", from.clone()));
        }
        if let Some(to) = &call.fallback_to {
            attributes.push(KeyValue::new("tandem.fallback.to", to.clone()));
        }
        if let (Some(scrubber), Some(text)) = (&self.content, &call.output_text) {
            let finish = call
                .usage
                .as_ref()
                .and_then(|u| u.finish_reason.clone())
                .unwrap_or_else(|| "stop".into());
            let messages = json!([{"role": "assistant", "parts": [{"type": "text", "content": scrubber.clean_text(text, MAX_CONTENT_CHARS)}], "finish_reason": finish}]);
            attributes.push(KeyValue::new(
                semconv::GEN_AI_OUTPUT_MESSAGES,
                messages.to_string(),
            ));
        }
        let status = match &call.error {
            Some(code) => {
                attributes.push(KeyValue::new(semconv::ERROR_TYPE, code.clone()));
                Status::error(code.clone())
            }
            None => Status::Unset,
        };
        let name = if model.is_empty() {
            "chat".to_string()
        } else {
            format!("chat {model}")
        };
        (name.into(), SpanKind::Client, attributes, status)
    }

    fn tool(
        &self,
        source: SpanSource<'_>,
        tool: &ToolRun,
    ) -> (Cow<'static, str>, SpanKind, Vec<KeyValue>, Status) {
        let mut attributes = vec![
            KeyValue::new(semconv::GEN_AI_OPERATION_NAME, "execute_tool"),
            KeyValue::new(semconv::GEN_AI_CONVERSATION_ID, source.session.to_string()),
            KeyValue::new(semconv::GEN_AI_TOOL_NAME, tool.name.clone()),
            KeyValue::new(semconv::GEN_AI_TOOL_CALL_ID, tool.tool_call_id.clone()),
            KeyValue::new(semconv::GEN_AI_TOOL_TYPE, "function"),
        ];
        if let Some(scrubber) = &self.content {
            if let Some(arguments) = &tool.arguments {
                attributes.push(KeyValue::new(
                    semconv::GEN_AI_TOOL_CALL_ARGUMENTS,
                    scrubber.clean_text(arguments, MAX_CONTENT_CHARS),
                ));
            }
            if let Some(result) = &tool.result {
                attributes.push(KeyValue::new(
                    semconv::GEN_AI_TOOL_CALL_RESULT,
                    scrubber.clean_text(result, MAX_CONTENT_CHARS),
                ));
            }
        }
        let status = if tool.failed {
            attributes.push(KeyValue::new(semconv::ERROR_TYPE, "tool_error"));
            Status::error("the tool returned an error")
        } else {
            Status::Unset
        };
        (
            format!("execute_tool {}", tool.name).into(),
            SpanKind::Internal,
            attributes,
            status,
        )
    }

    /// The span of a wait that was answered, under the run that paused.
    fn wait(
        &self,
        source: SpanSource<'_>,
        paused: &RunTimeline,
        runs: &[RunTimeline],
        item: &TimelineItem,
    ) -> Option<SpanData> {
        let (ItemDetail::Wait(wait), Some(end_ms)) = (&item.detail, item.end_ms) else {
            return None;
        };
        let place = place(source, paused);
        if !place.context.is_sampled() {
            return None;
        }
        let HumanWait {
            interrupt_id,
            reason,
            answer,
            answered_by_run_id,
        } = wait;
        let mut attributes = vec![
            KeyValue::new(semconv::GEN_AI_CONVERSATION_ID, source.session.to_string()),
            KeyValue::new("tandem.run.id", paused.run_id.clone()),
            KeyValue::new("tandem.interrupt.id", interrupt_id.clone()),
            KeyValue::new("tandem.interrupt.reason", reason.clone()),
        ];
        if let Some(answer) = answer {
            attributes.push(KeyValue::new("tandem.interrupt.answer", answer.clone()));
        }
        let mut links = Vec::new();
        if let Some(by) = answered_by_run_id {
            attributes.push(KeyValue::new("tandem.resumed_run.id", by.clone()));
            if let Some(resumed) = runs.iter().find(|run| &run.run_id == by) {
                links.push(Link::with_context(self::place(source, resumed).context));
            }
        }
        let key = format!("wait/{interrupt_id}");
        Some(self.span(Shape {
            context: child(&place, ids::item_span(source.session, &paused.run_id, &key)),
            parent: Some((place.context.span_id(), false)),
            kind: SpanKind::Internal,
            name: "await_human".into(),
            start: at(item.start_ms),
            end: at(end_ms.max(item.start_ms)),
            attributes,
            status: Status::Unset,
            links,
        }))
    }

    fn span(&self, shape: Shape) -> SpanData {
        let (parent_span_id, parent_span_is_remote) =
            shape.parent.unwrap_or((SpanId::INVALID, false));
        let mut links = SpanLinks::default();
        links.links = shape.links;
        SpanData {
            span_context: shape.context,
            parent_span_id,
            parent_span_is_remote,
            span_kind: shape.kind,
            name: shape.name,
            start_time: shape.start,
            end_time: shape.end,
            attributes: shape.attributes,
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links,
            status: shape.status,
            instrumentation_scope: self.scope.clone(),
        }
    }
}

/// What one span is.
pub(super) struct Shape {
    pub context: SpanContext,
    /// The parent span, and whether it is the caller's (remote).
    pub parent: Option<(SpanId, bool)>,
    pub kind: SpanKind,
    pub name: Cow<'static, str>,
    pub start: SystemTime,
    pub end: SystemTime,
    pub attributes: Vec<KeyValue>,
    pub status: Status,
    pub links: Vec<Link>,
}

/// The waits of any run that `run_id`'s start answered, with the run that paused.
fn answered_by<'a>(
    runs: &'a [RunTimeline],
    run_id: &'a str,
) -> impl Iterator<Item = (&'a RunTimeline, &'a TimelineItem)> {
    runs.iter().flat_map(move |paused| {
        paused
            .items
            .iter()
            .filter_map(move |item| match &item.detail {
                ItemDetail::Wait(wait) if wait.answered_by_run_id.as_deref() == Some(run_id) => {
                    Some((paused, item))
                }
                _ => None,
            })
    })
}

/// A run's span context: in its caller's trace when it recorded one, else its own.
fn place(source: SpanSource<'_>, run: &RunTimeline) -> RunPlace {
    let span = ids::run_span(source.session, &run.run_id);
    let parent = run.trace_parent.as_deref().and_then(parse_traceparent);
    let (trace, flags) = match &parent {
        Some(parent) => (parent.trace_id(), parent.trace_flags()),
        None => (
            ids::trace_of_run(source.session, &run.run_id),
            TraceFlags::SAMPLED,
        ),
    };
    RunPlace {
        context: SpanContext::new(trace, span, flags, false, TraceState::default()),
        parent,
    }
}

/// A span of the run's trace.
fn child(place: &RunPlace, span: SpanId) -> SpanContext {
    let context = &place.context;
    SpanContext::new(
        context.trace_id(),
        span,
        context.trace_flags(),
        false,
        TraceState::default(),
    )
}

/// `gen_ai.provider.name` and `gen_ai.request.model` of a call, as far as known.
fn provider_and_model(call: &ModelCall) -> Vec<KeyValue> {
    let mut attributes = Vec::new();
    if let Some(provider) = call.usage.as_ref().and_then(|u| u.provider.clone()) {
        attributes.push(KeyValue::new(semconv::GEN_AI_PROVIDER_NAME, provider));
    }
    if let Some(model) = call.model() {
        attributes.push(KeyValue::new(
            semconv::GEN_AI_REQUEST_MODEL,
            model.to_string(),
        ));
    }
    attributes
}

/// `gen_ai.usage.input_tokens` and `gen_ai.usage.output_tokens`.
fn tokens(input: u64, output: u64) -> [KeyValue; 2] {
    [
        KeyValue::new(semconv::GEN_AI_USAGE_INPUT_TOKENS, input as i64),
        KeyValue::new(semconv::GEN_AI_USAGE_OUTPUT_TOKENS, output as i64),
    ]
}

/// How a run ended, as `tandem.run.outcome` says it.
fn outcome(end: &RunEnd) -> &'static str {
    match end {
        RunEnd::Running => "running",
        RunEnd::Succeeded => "succeeded",
        RunEnd::Paused => "paused",
        RunEnd::Cancelled => "cancelled",
        RunEnd::Failed { .. } => "failed",
    }
}

fn at(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)
}
