//! The part of the transcript fold that handles tool calls and the interrupts that
//! `request_input` calls become: tool cards, hidden `request_input` calls, interrupt cards
//! and their answers. Split from [`super`] only to keep files short; same rules apply.

use shared::{Interrupt, Outcome};

use super::Transcript;
use crate::state::interrupt::{answer_from_result, Control};
use crate::state::item::{InterruptCard, ItemBody, ToolCall, REQUEST_INPUT};

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
        if let Some(at) = self.pending.remove(id) {
            if let ItemBody::Interrupt(card) = &mut self.items[at].body {
                card.answer = Some(answer_from_result(&card.control, content));
            }
            return vec![at];
        }
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
            };
            self.push(key.clone(), ItemBody::ToolCall(call));
        }
        let at = self.index[&key];
        self.open.retain(|&open| open != at);
        if let ItemBody::ToolCall(call) = &mut self.items[at].body {
            call.result = Some(content.to_string());
        }
        vec![at]
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
                touched.push(self.push(format!("cancelled:{seq}"), ItemBody::Cancelled));
            }
            _ => {}
        }
        touched
    }

    fn push_interrupt(&mut self, interrupt: &Interrupt) -> Option<usize> {
        let key = format!("interrupt:{}", interrupt.id);
        if self.index.contains_key(&key) {
            return None;
        }
        let card = InterruptCard {
            control: Control::of(interrupt),
            interrupt: interrupt.clone(),
            answer: None,
        };
        let at = self.push(key, ItemBody::Interrupt(Box::new(card)));
        if let Some(call) = &interrupt.tool_call_id {
            self.hidden_calls.remove(call);
            self.pending.insert(call.clone(), at);
        }
        Some(at)
    }
}
