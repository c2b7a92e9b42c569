//! The part of the transcript fold that reads how a run's answer ended when it did not
//! simply finish: cut off by a restart, or stopped by the person. Split from [`super`]
//! only to keep files short; same rules apply.
//!
//! **Cut off by a restart.** When Tandem stops mid-run, the next start repairs the run
//! (it closes the open text, gives a call the model was still writing an error result,
//! finishes the model call's step) and appends `CUSTOM tandem.run_recovered` before the
//! run continues. The continuation redoes the model call that was in flight, so its
//! answer comes again, whole. That call is the run's latest model call when none of the
//! tool calls it started was written whole (a whole call runs after the step and the
//! continuation goes on from it instead): its answers are then marked `interrupted`,
//! and the view shows them subordinate to the continuation, which is the answer.
//!
//! **Stopped.** The last answer of a run that finished cancelled is marked
//! `continuable` until the next run starts: the page offers to continue it.
//!
//! **Continued.** A run that continues a stopped answer (`CUSTOM tandem.continue`) writes
//! on into that answer's item: its first answer's text joins it, the stopped run's
//! "Run stopped" mark is no longer shown, and the stopped run's usage is counted with the
//! continuing run's, under it. The page shows one answer.

use shared::EventBody;

use super::Transcript;
use crate::state::item::ItemBody;

/// The `stepName` of the server's model-call steps (`STEP_STARTED` … `STEP_FINISHED`
/// around each model call; the server's `MODEL_CALL_STEP`).
pub const MODEL_CALL_STEP: &str = "model_call";

/// The last run that was stopped: its answer's item, and the rows its end added.
#[derive(Debug)]
pub(super) struct Stopped {
    /// Its id.
    pub run_id: String,
    /// The item of the answer it was stopped in, if it wrote one.
    pub answer: Option<usize>,
    /// Its "Run stopped" mark.
    pub mark: usize,
    /// Its usage row, if its model reported any.
    pub usage: Option<usize>,
}

/// One model call of the active run, as far as its events tell.
#[derive(Debug, Default)]
pub(super) struct ModelCall {
    /// Where its items begin.
    pub from: usize,
    /// Its step has not finished yet.
    pub open: bool,
    /// The tool calls it started (shown or hidden).
    pub calls: Vec<String>,
    /// Those of its calls whose result came while its step was still open: only a
    /// recovery does that, closing a call the model was still writing when Tandem
    /// stopped (a call written whole runs after the step, and gets its result then).
    pub cut: Vec<String>,
}

impl ModelCall {
    /// Whether a recovered run redoes this call: it wrote no tool call whole.
    fn redone(&self) -> bool {
        self.calls.iter().all(|call| self.cut.contains(call))
    }
}

/// Whether an event in a run is work (a model call, a message, a tool call, a continued
/// answer), as a note's short run has none.
pub(super) fn works(body: &EventBody) -> bool {
    match body {
        EventBody::StepStarted { step_name } => step_name == MODEL_CALL_STEP,
        EventBody::Custom { name, .. } => name == shared::custom::CONTINUE,
        EventBody::TextMessageStart { .. }
        | EventBody::ToolCallStart { .. }
        | EventBody::ReasoningStart { .. } => true,
        _ => false,
    }
}

impl Transcript {
    /// Follows the active run's model calls: each one's step, the tool calls it starts,
    /// and the results that come while its step is still open.
    pub(super) fn follow_model_call(&mut self, body: &EventBody) {
        let open = self.model_call.as_mut().filter(|call| call.open);
        match (body, open) {
            (EventBody::StepStarted { step_name }, _) if step_name == MODEL_CALL_STEP => {
                self.model_call = Some(ModelCall {
                    from: self.items.len(),
                    open: true,
                    ..ModelCall::default()
                });
            }
            (EventBody::StepFinished { step_name }, Some(call)) if step_name == MODEL_CALL_STEP => {
                call.open = false;
            }
            (EventBody::ToolCallStart { tool_call_id, .. }, Some(call)) => {
                call.calls.push(tool_call_id.clone())
            }
            (EventBody::ToolCallResult { tool_call_id, .. }, Some(call)) => {
                call.cut.push(tool_call_id.clone())
            }
            _ => {}
        }
    }

    /// Applies a `CUSTOM tandem.run_recovered` marker: the answers of the model call the
    /// continuation redoes are marked interrupted.
    pub(super) fn recovered(&mut self) -> Vec<usize> {
        let Some(call) = self.model_call.take() else {
            return Vec::new();
        };
        if !call.redone() {
            return Vec::new();
        }
        let mut touched = Vec::new();
        for (at, item) in self.items.iter_mut().enumerate().skip(call.from) {
            if let ItemBody::Assistant {
                interrupted,
                streaming,
                continuable,
                ..
            } = &mut item.body
            {
                *interrupted = true;
                *streaming = false;
                *continuable = false;
                touched.push(at);
            }
        }
        touched
    }

    /// Marks the last answer of the run that is ending stopped (one a restart cut off
    /// does not count: the continuation is the answer).
    pub(super) fn mark_continuable(&mut self) -> Vec<usize> {
        let last = (self.run_from..self.items.len()).rev().find(|&at| {
            matches!(
                self.items[at].body,
                ItemBody::Assistant {
                    interrupted: false,
                    ..
                }
            )
        });
        // A continuing run writes into the answer it continues, before its own items.
        let last = last.or(self.run_continues);
        let Some(at) = last else {
            return Vec::new();
        };
        if let ItemBody::Assistant { continuable, .. } = &mut self.items[at].body {
            *continuable = true;
        }
        self.continuable = Some(at);
        vec![at]
    }

    /// Ends a run that was stopped: its "Run stopped" mark, remembered with the answer and
    /// usage row a Continue would join.
    pub(super) fn stopped(&mut self, seq: u64) -> Vec<usize> {
        let usage = self
            .items
            .len()
            .checked_sub(1)
            .filter(|&at| at >= self.run_from)
            .filter(|&at| matches!(self.items[at].body, ItemBody::Usage(_)));
        let mark = self.push(
            format!("cancelled:{seq}"),
            ItemBody::Cancelled { continued: false },
        );
        self.stopped = Some(Stopped {
            run_id: self.run_id.clone().unwrap_or_default(),
            answer: self.continuable,
            mark,
            usage,
        });
        vec![mark]
    }

    /// Applies a `CUSTOM tandem.continue`: the run goes on with the answer `messageId`.
    /// Its first answer will write into that answer's item, the stopped run's mark is
    /// hidden and its usage joins this run's.
    pub(super) fn continues(&mut self, value: &serde_json::Value) -> Vec<usize> {
        let message = value.get("messageId").and_then(|m| m.as_str());
        let Some(&at) = message.and_then(|m| self.index.get(&format!("msg:{m}"))) else {
            return Vec::new();
        };
        self.joining = Some(at);
        self.run_continues = Some(at);
        let Some(stopped) = self.stopped.take().filter(|s| s.answer == Some(at)) else {
            return Vec::new();
        };
        let mut touched = vec![stopped.mark];
        self.items[stopped.mark].body = ItemBody::Cancelled { continued: true };
        if let Some(row) = stopped.usage {
            if let ItemBody::Usage(usage) = &mut self.items[row].body {
                let earlier = std::mem::take(usage);
                self.run_usage.merge(&earlier);
                touched.push(row);
            }
        }
        touched
    }

    /// The item a continuing run's first answer writes into, if it is that answer: the
    /// answer it continues goes on streaming.
    pub(super) fn join_answer(&mut self, key: &str) -> Option<usize> {
        let at = self.joining.take()?;
        self.index.insert(key.to_string(), at);
        if let ItemBody::Assistant {
            streaming,
            continuable,
            ..
        } = &mut self.items[at].body
        {
            *streaming = true;
            *continuable = false;
        }
        self.open.push(at);
        Some(at)
    }

    /// Takes the mark off the stopped run's answer: a new run started.
    pub(super) fn clear_continuable(&mut self) -> Vec<usize> {
        let Some(at) = self.continuable.take() else {
            return Vec::new();
        };
        if let ItemBody::Assistant { continuable, .. } = &mut self.items[at].body {
            *continuable = false;
        }
        vec![at]
    }
}
