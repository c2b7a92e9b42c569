//! Where a run's time went, read from its session's log: each model call, each tool call
//! and each wait for a person, with their times. The page draws it (a run's Timeline) from
//! the events it holds; the server exports the same as OpenTelemetry spans, live and for
//! past sessions (`tandem traces export`). One reading of the log serves all three.
//!
//! [`Timeline::observe`] takes a session's events in seq order, one at a time (the page
//! feeds it as events arrive). Times are the events' `timestamp`s (milliseconds since the
//! Unix epoch): a model call runs from its `STEP_STARTED` to its `STEP_FINISHED`, its first
//! chunk is its first streamed event; a tool call runs from the end of the model call
//! that asked for it (or the end of the call before it: tools run in order) to its
//! `TOOL_CALL_RESULT`; a wait runs from the `RUN_FINISHED` that paused to the answer, in a
//! later run, however much later.

mod build;

use serde::{Deserialize, Serialize};

use crate::usage::CallUsage;

pub use build::Timeline;

/// How a run ended, or that it has not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum RunEnd {
    /// No `RUN_FINISHED` nor `RUN_ERROR` yet.
    Running,
    /// It completed.
    Succeeded,
    /// It paused for a person (its waits say for what).
    Paused,
    /// It was stopped.
    Cancelled,
    /// It failed.
    Failed {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        message: String,
    },
}

/// One run as a waterfall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTimeline {
    pub run_id: String,
    /// The seq of its `RUN_STARTED`.
    pub first_seq: u64,
    pub started_ms: i64,
    /// Absent while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<i64>,
    pub end: RunEnd,
    /// The run that paused for what this run's start answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumes_run_id: Option<String>,
    /// The W3C `traceparent` of the request that started it, when one came
    /// (`CUSTOM tandem.trace_context`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_parent: Option<String>,
    /// The person's message that started it (kept only when asked for content).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_text: Option<String>,
    /// Its model calls, tool calls and waits, in the order they began.
    pub items: Vec<TimelineItem>,
}

impl RunTimeline {
    /// The usage of its model calls, summed.
    pub fn usage(&self) -> crate::usage::UsageTotals {
        let mut totals = crate::usage::UsageTotals::default();
        for item in &self.items {
            if let ItemDetail::Model(ModelCall {
                usage: Some(usage), ..
            }) = &item.detail
            {
                totals.add(usage);
            }
        }
        totals
    }
}

/// A model call, a tool call or a wait.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineItem {
    /// The seq of the event that began it.
    pub first_seq: u64,
    pub start_ms: i64,
    /// Absent while it goes on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_ms: Option<i64>,
    pub detail: ItemDetail,
}

impl TimelineItem {
    /// Its length in milliseconds, once it ended.
    pub fn duration_ms(&self) -> Option<i64> {
        self.end_ms.map(|end| (end - self.start_ms).max(0))
    }
}

/// What an item is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum ItemDetail {
    Model(ModelCall),
    Tool(ToolRun),
    Wait(HumanWait),
}

/// One model call (one attempt: a call that fell back to another model is two).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelCall {
    /// Its tokens, cost, provider and model, as `CUSTOM tandem.usage` recorded them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<CallUsage>,
    /// When its first chunk (text, reasoning or a tool call) arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_chunk_ms: Option<i64>,
    /// The model this attempt called when it failed before its first token and the call
    /// went on with `fallbackTo` (`CUSTOM tandem.model_fallback`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_to: Option<String>,
    /// Why it failed: the fallback's code, or the run's error when it ended the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The model this attempt replaced, when it is a fallback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_from: Option<String>,
    /// The tool calls it asked for.
    #[serde(default)]
    pub tool_calls: u32,
    /// Its answer text (kept only when asked for content).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_text: Option<String>,
}

impl ModelCall {
    /// The model it called, as best known.
    pub fn model(&self) -> Option<&str> {
        self.failed_model
            .as_deref()
            .or_else(|| self.usage.as_ref().and_then(|u| u.model.as_deref()))
    }
}

/// One tool call's execution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRun {
    pub tool_call_id: String,
    pub name: String,
    /// Its result was an error (`{"error": …}`), or it expired or was cancelled.
    #[serde(default)]
    pub failed: bool,
    /// Its arguments and result (kept only when asked for content).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// A wait for a person: from the pause to the answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HumanWait {
    pub interrupt_id: String,
    /// The interrupt's reason (`input_required`, `tool_approval`, `budget`, `client_tools`).
    pub reason: String,
    /// How it was answered: `resolved`, `cancelled`, `expired`, `approved`, `rejected`,
    /// `continued`, `stopped`; absent while it waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The run the answer started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by_run_id: Option<String>,
}

#[cfg(test)]
mod tests;
