//! What a thread's log already holds, in the terms of a client's input: the ids of its
//! messages and tool calls, the calls that have results, where each run started and
//! which client `runId` started it.
//!
//! An AG-UI client sends its whole conversation every time; the log stays the source of
//! truth, so a message it already holds (by id) is ignored and only what is new acts.

use std::collections::{HashMap, HashSet};

use shared::run_input::{input_messages, InputMessage as Carried};
use shared::{Event, EventBody};

use super::input::InputMessage;
use crate::domain::SessionId;
use crate::error::ApiError;
use crate::store::Store;

/// Events read per query.
const PAGE: u32 = 10_000;
/// Event types that name a message or a tool call; other rows are not parsed.
const NAMING: [&str; 5] = [
    "\"TEXT_MESSAGE_START\"",
    "\"TOOL_CALL_START\"",
    "\"TOOL_CALL_RESULT\"",
    "\"REASONING_MESSAGE_START\"",
    "\"RUN_STARTED\"",
];

/// The ids a thread's log holds.
#[derive(Debug, Default)]
pub struct Known {
    ids: HashSet<String>,
    answered_calls: HashSet<String>,
    /// The seq of each run's `RUN_STARTED`.
    run_starts: HashMap<String, u64>,
    /// The run each client `runId` started (from `RUN_STARTED.input.runId`).
    client_runs: HashMap<String, String>,
    /// The seq of the latest `RUN_STARTED`.
    pub last_run_start: Option<u64>,
    /// The last seq read.
    pub last_seq: u64,
}

impl Known {
    /// Reads the whole log of `session`.
    pub async fn read<S: Store>(store: &S, session: SessionId) -> Result<Self, ApiError> {
        let mut known = Known::default();
        loop {
            let rows = store.events_after(session, known.last_seq, PAGE).await?;
            for row in &rows {
                known.last_seq = row.seq;
                if NAMING.iter().any(|name| row.json.contains(name)) {
                    if let Ok(event) = serde_json::from_str::<Event>(&row.json) {
                        known.observe(row.seq, event.body);
                    }
                }
            }
            if rows.len() < PAGE as usize {
                return Ok(known);
            }
        }
    }

    fn observe(&mut self, seq: u64, body: EventBody) {
        match body {
            EventBody::TextMessageStart { message_id, .. }
            | EventBody::ReasoningMessageStart { message_id, .. } => {
                self.ids.insert(message_id);
            }
            EventBody::ToolCallStart {
                tool_call_id,
                parent_message_id,
                ..
            } => {
                self.ids.insert(tool_call_id);
                self.ids.extend(parent_message_id);
            }
            EventBody::ToolCallResult {
                message_id,
                tool_call_id,
                ..
            } => {
                self.ids.insert(message_id);
                self.answered_calls.insert(tool_call_id);
            }
            EventBody::RunStarted { run_id, input, .. } => {
                for message in input_messages(input.as_ref()) {
                    match message {
                        Carried::User { id, .. } => self.ids.insert(id),
                        Carried::ToolResult {
                            id, tool_call_id, ..
                        } => {
                            self.answered_calls.insert(tool_call_id);
                            self.ids.insert(id)
                        }
                    };
                }
                let client_run = input.as_ref().and_then(|input| input["runId"].as_str());
                if let Some(client_run) = client_run {
                    self.client_runs
                        .insert(client_run.to_string(), run_id.clone());
                }
                self.run_starts.insert(run_id, seq);
                self.last_run_start = Some(seq);
            }
            _ => {}
        }
    }

    /// Whether the log already holds this message: its id, or for a tool message a
    /// result of its call.
    pub fn holds(&self, message: &InputMessage) -> bool {
        self.ids.contains(&message.id)
            || message
                .tool_call_id
                .as_ref()
                .is_some_and(|call| message.role == "tool" && self.answered_calls.contains(call))
    }

    /// The run of the thread an input with this client `runId` names, if there is one:
    /// the run an earlier input with it started (its id, now that a client's `runId` is
    /// the run's id, or the server's id it got before), or a run of the thread by that id.
    pub fn run_of_client(&self, client_run_id: &str) -> Option<&str> {
        self.client_runs
            .get(client_run_id)
            .map(String::as_str)
            .or_else(|| {
                self.run_starts
                    .get_key_value(client_run_id)
                    .map(|(id, _)| id.as_str())
            })
    }

    /// A seq at or before `run_id`'s `RUN_STARTED`: just before it if the log read held
    /// it, else the end of what was read (the run started later).
    pub fn before_run(&self, run_id: &str) -> u64 {
        self.run_starts
            .get(run_id)
            .map_or(self.last_seq, |seq| seq - 1)
    }
}
