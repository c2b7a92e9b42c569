//! What a trial did, read from its branch's log: how far it is, its last answer, what it
//! used and cost, how long it took to its first token and to its end, where it first
//! differed from the record, and the judge's verdict.

use std::collections::HashMap;

use shared::api::SessionStatus;
use shared::replays::{Diverged, TrialStatus, TrialUsage, Verdict};
use shared::usage::CallUsage;
use shared::{Event, EventBody, Outcome, TextRole};

use crate::agent::conversation::MODEL_CALL_STEP;

/// A trial as its log says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// `None` while its run goes on or waits.
    pub ended: Option<Ended>,
    pub final_text: String,
    pub usage: TrialUsage,
    pub cost_usd: Option<f64>,
    pub latency_ms: Option<u64>,
    pub first_token_ms: Option<u64>,
    pub diverged_at_seq: Option<u64>,
    pub verdict: Option<Verdict>,
    /// The model calls of the events read (the trial's own).
    pub model_calls: u64,
}

/// How a trial's last run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    Finished,
    /// A call it may not make, or a failure: why.
    Stopped(String),
    /// Stopped by a person or a cancel.
    Cancelled,
}

impl Reading {
    /// The trial's status, given its session's.
    pub fn status(&self, session: SessionStatus) -> TrialStatus {
        match (session, &self.ended) {
            (SessionStatus::AwaitingInput, _) => TrialStatus::Waiting,
            (SessionStatus::Running, _) | (SessionStatus::Idle, None) => TrialStatus::Running,
            (SessionStatus::Idle, Some(Ended::Finished)) => TrialStatus::Finished,
            (SessionStatus::Idle, Some(Ended::Stopped(_))) => TrialStatus::Stopped,
            (SessionStatus::Idle, Some(Ended::Cancelled)) => TrialStatus::Cancelled,
        }
    }
}

/// Reads a trial from its branch's events (`(seq, event)`), where the branch parts after
/// `at_seq` (events at or before it are passed over).
pub fn read(events: &[(u64, Event)], at_seq: u64) -> Reading {
    let mut reading = Reading::default();
    let mut started_at: Option<i64> = None;
    let mut answers: Vec<String> = Vec::new();
    let mut texts: HashMap<String, String> = HashMap::new();
    let mut calls: HashMap<String, u64> = HashMap::new();
    let mut diverged: Option<String> = None;
    let mut cost: Option<f64> = None;
    for (seq, event) in events.iter().filter(|(seq, _)| *seq > at_seq) {
        let at = event.timestamp;
        let since = |start: Option<i64>| {
            start.and_then(|start| at.and_then(|at| u64::try_from(at - start).ok()))
        };
        match &event.body {
            EventBody::StepStarted { step_name } if step_name == MODEL_CALL_STEP => {
                reading.model_calls += 1
            }
            EventBody::RunStarted { .. } if started_at.is_none() => started_at = at,
            EventBody::TextMessageStart {
                message_id,
                role: None | Some(TextRole::Assistant),
                ..
            } => {
                answers.push(message_id.clone());
                texts.insert(message_id.clone(), String::new());
            }
            EventBody::TextMessageContent { message_id, delta } => {
                if let Some(text) = texts.get_mut(message_id) {
                    if reading.first_token_ms.is_none() {
                        reading.first_token_ms = since(started_at);
                    }
                    text.push_str(delta);
                }
            }
            EventBody::ToolCallStart { tool_call_id, .. } => {
                calls.insert(tool_call_id.clone(), *seq);
            }
            EventBody::Custom { name, value } if name == shared::custom::USAGE => {
                if let Ok(call) = serde_json::from_value::<CallUsage>(value.clone()) {
                    reading.usage.input_tokens += call.input_tokens;
                    reading.usage.output_tokens += call.output_tokens;
                    if let Some(more) = call.cost_usd {
                        cost = Some(cost.unwrap_or(0.0) + more);
                    }
                }
            }
            EventBody::Custom { name, value }
                if name == shared::custom::REPLAY_DIVERGED && diverged.is_none() =>
            {
                diverged = serde_json::from_value::<Diverged>(value.clone())
                    .ok()
                    .map(|d| d.tool_call_id);
            }
            EventBody::Custom { name, value } if name == shared::custom::REPLAY_VERDICT => {
                reading.verdict = serde_json::from_value(value.clone()).ok();
            }
            // The judge's note is a short run of its own after the trial's end.
            EventBody::RunFinished { .. } | EventBody::RunError { .. }
                if reading.verdict.is_some() => {}
            EventBody::RunFinished { outcome, .. } => {
                reading.latency_ms = since(started_at);
                reading.ended = match outcome {
                    Some(Outcome::Interrupt { .. }) => None,
                    Some(Outcome::Cancelled) => Some(Ended::Cancelled),
                    Some(Outcome::Success { .. }) | None => Some(Ended::Finished),
                };
            }
            EventBody::RunError { message, code, .. } => {
                reading.latency_ms = since(started_at);
                let why = match code.as_deref() {
                    Some("replay_stopped") => message.clone(),
                    Some(code) => format!("it failed ({code}): {message}"),
                    None => format!("it failed: {message}"),
                };
                reading.ended = Some(Ended::Stopped(why));
            }
            _ => {}
        }
    }
    // The last message of the model's that says something.
    reading.final_text = answers
        .iter()
        .rev()
        .find_map(|id| texts.remove(id).filter(|text| !text.trim().is_empty()))
        .unwrap_or_default();
    reading.diverged_at_seq = diverged.and_then(|id| calls.get(&id).copied());
    reading.cost_usd = cost;
    reading
}
