//! AG-UI 1.0's ordering rules (as `verifyEvents` enforces them), plus the one the client
//! does not check: every run ends. The real npm check runs in `tests/conformance`.

use std::collections::HashSet;

use shared::{Event, EventBody};

/// Panics with the offending seq if the session's log breaks a rule or has a seq gap.
pub fn assert_valid_session(events: &[(u64, Event)], expect_closed: bool) {
    let mut state = Rules::default();
    for (index, (seq, event)) in events.iter().enumerate() {
        assert_eq!(
            *seq,
            index as u64 + 1,
            "seqs must be 1, 2, 3, … without gaps"
        );
        if let Err(problem) = state.check(&event.body) {
            panic!(
                "event seq {seq} ({}) breaks AG-UI ordering: {problem}",
                event.type_name()
            );
        }
    }
    if expect_closed {
        assert!(!state.in_run, "the last run never ended");
    }
}

#[derive(Default)]
struct Rules {
    started: bool,
    in_run: bool,
    finished: bool,
    messages: HashSet<String>,
    reasoning_spans: HashSet<String>,
    reasoning_messages: HashSet<String>,
    tool_calls: HashSet<String>,
    steps: HashSet<String>,
    /// Activities that have had their snapshot (a delta needs one before it).
    activities: HashSet<String>,
}

impl Rules {
    fn check(&mut self, body: &EventBody) -> Result<(), String> {
        if !self.started
            && !matches!(
                body,
                EventBody::RunStarted { .. } | EventBody::RunError { .. }
            )
        {
            return Err("the first event must be RUN_STARTED".into());
        }
        if self.finished
            && !matches!(
                body,
                EventBody::RunStarted { .. } | EventBody::RunError { .. }
            )
        {
            return Err("only RUN_STARTED or RUN_ERROR may follow RUN_FINISHED".into());
        }
        match body {
            EventBody::RunStarted { .. } => {
                if self.in_run {
                    return Err("RUN_STARTED while a run is active".into());
                }
                *self = Rules {
                    started: true,
                    in_run: true,
                    ..Rules::default()
                };
            }
            EventBody::RunFinished { .. } => {
                if !self.in_run {
                    return Err("RUN_FINISHED outside a run".into());
                }
                self.all_closed()?;
                self.in_run = false;
                self.finished = true;
            }
            EventBody::RunError { .. } => {
                self.in_run = false;
                self.finished = true;
            }
            EventBody::TextMessageStart { message_id, .. } => {
                open(&mut self.messages, message_id, "text message")?
            }
            EventBody::TextMessageContent { message_id, delta } => {
                if delta.is_empty() {
                    return Err("empty TEXT_MESSAGE_CONTENT delta".into());
                }
                is_open(&self.messages, message_id, "text message")?
            }
            EventBody::TextMessageEnd { message_id } => {
                close(&mut self.messages, message_id, "text message")?
            }
            EventBody::ReasoningStart { message_id } => {
                open(&mut self.reasoning_spans, message_id, "reasoning")?
            }
            EventBody::ReasoningEnd { message_id } => {
                close(&mut self.reasoning_spans, message_id, "reasoning")?
            }
            EventBody::ReasoningMessageStart { message_id, .. } => open(
                &mut self.reasoning_messages,
                message_id,
                "reasoning message",
            )?,
            EventBody::ReasoningMessageContent { message_id, .. } => {
                is_open(&self.reasoning_messages, message_id, "reasoning message")?
            }
            EventBody::ReasoningEncryptedValue { entity_id, .. } => {
                is_open(&self.reasoning_messages, entity_id, "reasoning message")?
            }
            EventBody::ReasoningMessageEnd { message_id } => close(
                &mut self.reasoning_messages,
                message_id,
                "reasoning message",
            )?,
            EventBody::ToolCallStart { tool_call_id, .. } => {
                open(&mut self.tool_calls, tool_call_id, "tool call")?
            }
            EventBody::ToolCallArgs { tool_call_id, .. } => {
                is_open(&self.tool_calls, tool_call_id, "tool call")?
            }
            EventBody::ToolCallEnd { tool_call_id } => {
                close(&mut self.tool_calls, tool_call_id, "tool call")?
            }
            EventBody::StepStarted { step_name } => open(&mut self.steps, step_name, "step")?,
            EventBody::StepFinished { step_name } => close(&mut self.steps, step_name, "step")?,
            EventBody::ActivitySnapshot { message_id, .. } => {
                self.activities.insert(message_id.clone());
            }
            EventBody::ActivityDelta { message_id, .. } => {
                is_open(&self.activities, message_id, "activity")?
            }
            EventBody::ToolCallResult { .. }
            | EventBody::Custom { .. }
            | EventBody::StateSnapshot { .. }
            | EventBody::StateDelta { .. } => {}
            EventBody::Unknown => return Err("an event type Tandem does not write".into()),
        }
        Ok(())
    }

    fn all_closed(&self) -> Result<(), String> {
        let open = [
            &self.messages,
            &self.reasoning_spans,
            &self.reasoning_messages,
            &self.tool_calls,
            &self.steps,
        ];
        match open.iter().find(|set| !set.is_empty()) {
            Some(set) => Err(format!("RUN_FINISHED with {:?} still open", set)),
            None => Ok(()),
        }
    }
}

fn open(set: &mut HashSet<String>, id: &str, what: &str) -> Result<(), String> {
    if set.insert(id.to_string()) {
        Ok(())
    } else {
        Err(format!("{what} {id} started twice"))
    }
}

fn is_open(set: &HashSet<String>, id: &str, what: &str) -> Result<(), String> {
    if set.contains(id) {
        Ok(())
    } else {
        Err(format!("{what} {id} is not open"))
    }
}

fn close(set: &mut HashSet<String>, id: &str, what: &str) -> Result<(), String> {
    if set.remove(id) {
        Ok(())
    } else {
        Err(format!("{what} {id} ended but was not open"))
    }
}
