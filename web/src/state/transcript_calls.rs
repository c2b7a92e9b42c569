//! The part of the transcript fold that handles tool calls and interrupts: tool cards,
//! hidden `request_input` calls, interrupt cards and their answers. A question's answer is
//! its `request_input` call's result; a tool approval's answer is the server's
//! `CUSTOM tandem.tool_approval` record, and the approved call's own result stays on its
//! tool card. Split from [`super`] only to keep files short; same rules apply.

use serde_json::Value;
use shared::{Interrupt, Outcome};

use super::Transcript;
use crate::state::answer::{answer_from_result, is_expired_result, Answer};
use crate::state::approval::{answer_from_tool_result, ApprovalRecord};
use crate::state::interrupt::Control;
use crate::state::item::{InterruptCard, ItemBody, ToolCall, REQUEST_INPUT};

/// Why a call's tool card is kept from being abandoned by the run that paused.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// The call waits for the person's approval.
    Approval,
    /// The call was answered and the resumed run owns it again (tracked as open).
    Resumed,
    /// The call is an AG-UI client's own; its result comes with the next run's input.
    ClientResult,
}

fn is_approval(control: &Control) -> bool {
    matches!(control, Control::ToolApproval { .. })
}

impl Transcript {
    pub(super) fn tool_start(&mut self, id: &str, name: &str) -> Vec<usize> {
        if name == REQUEST_INPUT {
            self.hidden_calls.insert(id.to_string(), String::new());
            return Vec::new();
        }
        let key = format!("tool:{id}");
        if self.index.contains_key(&key) {
            return Vec::new();
        }
        let body = ItemBody::ToolCall(ToolCall {
            name: name.to_string(),
            args: String::new(),
            result: None,
            abandoned: false,
            awaiting_approval: false,
            attachments: Vec::new(),
            progress: None,
        });
        let at = self.push(key, body);
        self.open.push(at);
        vec![at]
    }

    pub(super) fn tool_args(&mut self, id: &str, delta: &str) -> Vec<usize> {
        if let Some(args) = self.hidden_calls.get_mut(id) {
            args.push_str(delta);
            return Vec::new();
        }
        let Some(&at) = self.index.get(&format!("tool:{id}")) else {
            return Vec::new();
        };
        if let ItemBody::ToolCall(call) = &mut self.items[at].body {
            call.args.push_str(delta);
        }
        vec![at]
    }

    pub(super) fn tool_result(&mut self, id: &str, content: &str) -> Vec<usize> {
        let mut touched = Vec::new();
        if let Some(at) = self.pending.remove(id) {
            touched.push(at);
            if let ItemBody::Interrupt(card) = &mut self.items[at].body {
                if !is_approval(&card.control) {
                    card.answer = Some(answer_from_result(&card.control, content));
                    return touched;
                }
                // The approved (or rejected) call's result belongs to its tool card; it
                // settles the approval card only when the approval's record never came.
                card.answer = Some(answer_from_tool_result(content));
            }
        } else if is_expired_result(content) {
            touched.extend(self.expire_approval(id));
        }
        touched.push(self.tool_card_result(id, content));
        touched
    }

    /// Marks the approval card of a call as expired when the call's result says nobody
    /// answered in time. The approval's record came first and already settled the card;
    /// this result, not that record's wording, is what surely tells an expiry.
    fn expire_approval(&mut self, call: &str) -> Option<usize> {
        let at = self.items.iter().position(|item| match &item.body {
            ItemBody::Interrupt(card) => {
                is_approval(&card.control) && card.interrupt.tool_call_id.as_deref() == Some(call)
            }
            _ => false,
        })?;
        let ItemBody::Interrupt(card) = &mut self.items[at].body else {
            return None;
        };
        if card.answer.as_ref().is_some_and(Answer::is_expired) {
            return None;
        }
        card.answer = Some(Answer::expired_approval());
        Some(at)
    }

    /// Puts a result on its tool card, creating the card if its call was never shown.
    fn tool_card_result(&mut self, id: &str, content: &str) -> usize {
        let key = format!("tool:{id}");
        if !self.index.contains_key(&key) {
            // A request_input call that became no interrupt (e.g. a second one in a turn)
            // is shown after all, so its error result is visible.
            let (name, args) = match self.hidden_calls.remove(id) {
                Some(args) => (REQUEST_INPUT, args),
                None => ("unknown tool", String::new()),
            };
            let call = ToolCall {
                name: name.to_string(),
                args,
                result: None,
                abandoned: false,
                awaiting_approval: false,
                attachments: Vec::new(),
                progress: None,
            };
            self.push(key.clone(), ItemBody::ToolCall(call));
        }
        let at = self.index[&key];
        self.open.retain(|&open| open != at);
        if let ItemBody::ToolCall(call) = &mut self.items[at].body {
            call.result = Some(content.to_string());
            call.awaiting_approval = false;
        }
        at
    }

    /// Applies a `CUSTOM tandem.tool_approval` record: the approval card it names (by
    /// interrupt id, else by the pending tool call) becomes its read-only answer, and the
    /// call's tool card runs again in the resumed run.
    pub(super) fn approval_recorded(&mut self, value: &Value) -> Vec<usize> {
        let record = ApprovalRecord::from_value(value);
        let by_interrupt = record
            .interrupt_id
            .as_ref()
            .and_then(|id| self.index.get(&format!("interrupt:{id}")).copied());
        let by_call = || {
            let call = record.tool_call_id.as_ref()?;
            self.pending.get(call).copied()
        };
        let Some(at) = by_interrupt.or_else(by_call) else {
            return Vec::new();
        };
        let ItemBody::Interrupt(card) = &mut self.items[at].body else {
            return Vec::new();
        };
        if !is_approval(&card.control) {
            return Vec::new();
        }
        card.answer = Some(record.answer());
        let call = card.interrupt.tool_call_id.clone().or(record.tool_call_id);
        let mut touched = vec![at];
        if let Some(call) = call {
            self.pending.remove(&call);
            // The run that follows the answer owns the call again: its end abandons it
            // if no result came.
            touched.extend(self.hold_tool_card(&call, Hold::Resumed));
        }
        touched
    }

    /// Applies a `CUSTOM tandem.budget_decision` record: the budget card it names becomes
    /// its read-only answer (continued, or stopped).
    pub(super) fn budget_decided(&mut self, value: &Value) -> Vec<usize> {
        let id = value
            .get("interruptId")
            .and_then(Value::as_str)
            .unwrap_or("");
        let key = format!("interrupt:{id}");
        let Some(&at) = self.index.get(&key) else {
            return Vec::new();
        };
        self.pending.remove(&key);
        let ItemBody::Interrupt(card) = &mut self.items[at].body else {
            return Vec::new();
        };
        card.answer = Some(crate::state::answer::budget_decision(value));
        vec![at]
    }

    /// Applies a tool call's progress (`ACTIVITY_SNAPSHOT` of type `progress`): its card
    /// shows how far the call got.
    pub(super) fn progress_snapshot(
        &mut self,
        message_id: &str,
        activity_type: &str,
        content: &Value,
    ) -> Vec<usize> {
        let call = content.get("toolCallId").and_then(Value::as_str);
        let at = call.and_then(|call| self.index.get(&format!("tool:{call}")).copied());
        let (Some(at), "progress") = (at, activity_type) else {
            return Vec::new();
        };
        let ItemBody::ToolCall(tool) = &mut self.items[at].body else {
            return Vec::new();
        };
        tool.progress = Some(content.clone());
        self.activities.insert(message_id.to_string(), at);
        vec![at]
    }

    /// Applies a change of a tool call's progress (`ACTIVITY_DELTA`).
    pub(super) fn progress_delta(&mut self, message_id: &str, patch: &[Value]) -> Vec<usize> {
        let Some(&at) = self.activities.get(message_id) else {
            return Vec::new();
        };
        let ItemBody::ToolCall(tool) = &mut self.items[at].body else {
            return Vec::new();
        };
        let Some(content) = &tool.progress else {
            return Vec::new();
        };
        match shared::state::apply(content, patch) {
            Ok(changed) => tool.progress = Some(changed),
            Err(_) => return Vec::new(),
        }
        vec![at]
    }

    /// Keeps a call's tool card waiting while its approval (or its client's result)
    /// waits, or running while its resumed run works, instead of abandoned by the run that
    /// paused.
    fn hold_tool_card(&mut self, call: &str, hold: Hold) -> Option<usize> {
        let at = *self.index.get(&format!("tool:{call}"))?;
        let ItemBody::ToolCall(tool) = &mut self.items[at].body else {
            return None;
        };
        if tool.result.is_some() {
            return None;
        }
        tool.abandoned = false;
        tool.awaiting_approval = hold == Hold::Approval;
        if hold == Hold::Resumed && !self.open.contains(&at) {
            self.open.push(at);
        }
        Some(at)
    }

    pub(super) fn run_finished(&mut self, seq: u64, outcome: Option<&Outcome>) -> Vec<usize> {
        let mut touched = self.end_run();
        match outcome {
            Some(Outcome::Interrupt { interrupts }) => {
                for interrupt in interrupts {
                    touched.extend(self.push_interrupt(interrupt));
                }
            }
            Some(Outcome::Cancelled) => {
                touched.extend(self.mark_continuable());
                touched.extend(self.stopped(seq));
            }
            // Calls of an AG-UI client's own tools: they wait for the client's results
            // (which the next run's input brings) like a question waits for its answer.
            Some(Outcome::Success {
                pending_tool_call_ids: Some(calls),
            }) => {
                for call in calls {
                    if let Some(at) = self.hold_tool_card(call, Hold::ClientResult) {
                        self.pending.insert(call.clone(), at);
                        touched.push(at);
                    }
                }
            }
            _ => {}
        }
        touched
    }

    fn push_interrupt(&mut self, interrupt: &Interrupt) -> Vec<usize> {
        let key = format!("interrupt:{}", interrupt.id);
        if self.index.contains_key(&key) {
            return Vec::new();
        }
        let card = InterruptCard {
            control: Control::of(interrupt),
            interrupt: interrupt.clone(),
            answer: None,
        };
        let approval = is_approval(&card.control);
        let at = self.push(key.clone(), ItemBody::Interrupt(Box::new(card)));
        let mut touched = vec![at];
        match &interrupt.tool_call_id {
            Some(call) => {
                self.hidden_calls.remove(call);
                self.pending.insert(call.clone(), at);
                if approval {
                    touched.extend(self.hold_tool_card(call, Hold::Approval));
                }
            }
            // A wait of the run's own (its budget): pending until its decision.
            None => {
                self.pending.insert(key, at);
            }
        }
        touched
    }
}
