//! The items a transcript is made of, and the small derivations the view needs from them.
//!
//! It owns the data of each kind of item (message, reasoning span, tool call, interrupt
//! card, run error, cancel marker) and nothing about how events build them — that is
//! [`super::transcript`]. Pure Rust, no signals or DOM.

use serde_json::Value;
use shared::decimal::{fixed, percent};
use shared::usage::UsageTotals;
use shared::Interrupt;

use super::answer::Answer;
use super::interrupt::Control;

/// The tool whose calls become interrupt cards instead of tool cards.
pub const REQUEST_INPUT: &str = "request_input";

/// One entry of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Unique and stable for the item's life: the view's `<For>` key.
    pub key: String,
    /// What the item is and holds.
    pub body: ItemBody,
}

/// Which kind of item it is, without its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    User,
    Assistant,
    Reasoning,
    ToolCall,
    Interrupt,
    RunError,
    Cancelled,
    Usage,
    Notice,
}

impl Item {
    /// The item's kind, which never changes for a key.
    pub fn kind(&self) -> ItemKind {
        match &self.body {
            ItemBody::User { .. } => ItemKind::User,
            ItemBody::Assistant { .. } => ItemKind::Assistant,
            ItemBody::Reasoning { .. } => ItemKind::Reasoning,
            ItemBody::ToolCall(_) => ItemKind::ToolCall,
            ItemBody::Interrupt(_) => ItemKind::Interrupt,
            ItemBody::RunError { .. } => ItemKind::RunError,
            ItemBody::Cancelled { .. } => ItemKind::Cancelled,
            ItemBody::Usage(_) => ItemKind::Usage,
            ItemBody::Notice { .. } => ItemKind::Notice,
        }
    }

    /// The text of a message or reasoning span; empty for other items.
    pub fn text(&self) -> &str {
        match &self.body {
            ItemBody::User { text, .. }
            | ItemBody::Assistant { text, .. }
            | ItemBody::Reasoning { text, .. } => text,
            _ => "",
        }
    }

    /// Whether this is an answer a restart cut off (the recovered run answered again).
    pub fn is_interrupted(&self) -> bool {
        matches!(
            self.body,
            ItemBody::Assistant {
                interrupted: true,
                ..
            }
        )
    }

    /// Whether this is the last answer of a stopped run with nothing after it.
    pub fn is_continuable(&self) -> bool {
        matches!(
            self.body,
            ItemBody::Assistant {
                continuable: true,
                ..
            }
        )
    }

    /// Whether this is the latest answer of its run (the one rated).
    pub fn is_last_of_run(&self) -> bool {
        matches!(
            self.body,
            ItemBody::Assistant {
                last_of_run: true,
                ..
            }
        )
    }

    /// How the person rated this answer, if they did.
    pub fn rating(&self) -> Option<shared::feedback::Rating> {
        match self.body {
            ItemBody::Assistant { rating, .. } => rating,
            _ => None,
        }
    }

    /// Whether a message or reasoning span is still streaming.
    pub fn is_streaming(&self) -> bool {
        matches!(
            self.body,
            ItemBody::Assistant {
                streaming: true,
                ..
            } | ItemBody::Reasoning {
                streaming: true,
                ..
            }
        )
    }
}

/// The kinds of transcript item.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemBody {
    /// A message the person sent; `view_start` when the model's view of a long
    /// conversation begins here (earlier turns are no longer sent to it), with the
    /// `summary` of those turns the model is sent instead, if one was made.
    User {
        text: String,
        view_start: bool,
        summary: Option<String>,
        /// The files and images it carries (`CUSTOM tandem.attachments`).
        attachments: Vec<shared::attachments::Attachment>,
    },
    /// The agent's answer; `streaming` until `TEXT_MESSAGE_END`. `interrupted` when a
    /// restart cut it off and the recovered run answered again after it (the answer is
    /// the continuation; this part is kept, subordinate). `continuable` while it is the
    /// last answer of a stopped run and no run came after: the page offers Continue.
    Assistant {
        text: String,
        streaming: bool,
        interrupted: bool,
        continuable: bool,
        /// How the person rated the answer (`CUSTOM tandem.feedback`), if they did.
        rating: Option<shared::feedback::Rating>,
        /// The latest answer of its run: the one a rating is given under.
        last_of_run: bool,
    },
    /// A reasoning span; its messages' text, `streaming` until `REASONING_END`.
    Reasoning { text: String, streaming: bool },
    /// A tool call and, once it arrives, its result.
    ToolCall(ToolCall),
    /// A question for the person, pending or answered.
    Interrupt(Box<InterruptCard>),
    /// A run failed.
    RunError {
        message: String,
        code: Option<String>,
    },
    /// A run was stopped before it completed; `continued` once the person continued its
    /// answer (the answer goes on, so the mark is not shown).
    Cancelled { continued: bool },
    /// What a finished run's model calls used and cost.
    Usage(UsageTotals),
    /// Something the person should know that is not a message: an MCP server a call
    /// found down (`tandem.mcp_server_unavailable`).
    Notice { text: String, warning: bool },
}

/// A tool call card's data.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// The JSON arguments as streamed so far.
    pub args: String,
    /// The result's content, once it arrived.
    pub result: Option<String>,
    /// Set when the run ended before a result arrived.
    pub abandoned: bool,
    /// Set while the call waits for the person to approve or reject it.
    pub awaiting_approval: bool,
    /// The files its result returned (an MCP tool's images and resources).
    pub attachments: Vec<shared::attachments::Attachment>,
    /// How far the call got, as its tool reports it while it works (its progress
    /// activity's content: `{progress, total?, message?}`).
    pub progress: Option<Value>,
}

/// A reported number as a person reads it: whole numbers without decimals.
fn figure(value: f64) -> String {
    match value.fract() == 0.0 && value.abs() < 1e15 {
        true => format!("{}", value as i64),
        false => fixed(value, 1),
    }
}

/// Where a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    /// No result yet.
    Running,
    /// No result yet: the call waits for the person's approval.
    Awaiting,
    /// A result that is not an error.
    Done,
    /// The person rejected the call, so it did not run (`{"status":"rejected",…}`).
    Rejected,
    /// A result that is a JSON object with an `"error"` key, or no result at all.
    Error,
}

impl ToolStatus {
    /// The spelling used in `data-status`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Awaiting => "awaiting",
            Self::Done => "done",
            Self::Rejected => "rejected",
            Self::Error => "error",
        }
    }

    /// What the card's status pill says.
    pub fn label(self) -> &'static str {
        match self {
            Self::Running => "running…",
            Self::Awaiting => "waiting for your approval",
            Self::Done => "done",
            Self::Rejected => "rejected",
            Self::Error => "error",
        }
    }
}

impl ToolCall {
    /// How far the call got, while it works: the whole percent done (when the tool said
    /// the whole) and what a person reads (`3 of 4 — indexing`).
    pub fn progress(&self) -> Option<(Option<u8>, String)> {
        let working = self.result.is_none() && !self.abandoned;
        let content = self.progress.as_ref().filter(|_| working)?;
        let done = content.get("progress").and_then(Value::as_f64)?;
        let total = content
            .get("total")
            .and_then(Value::as_f64)
            .filter(|t| *t > 0.0);
        let amount = match total {
            Some(total) => format!("{} of {}", figure(done), figure(total)),
            None => figure(done),
        };
        let label = match content.get("message").and_then(Value::as_str) {
            Some(message) => format!("{amount} — {message}"),
            None => amount,
        };
        Some((total.map(|total| percent(done, total)), label))
    }

    /// The call's status, derived from its result.
    pub fn status(&self) -> ToolStatus {
        match &self.result {
            None if self.abandoned => ToolStatus::Error,
            None if self.awaiting_approval => ToolStatus::Awaiting,
            None => ToolStatus::Running,
            Some(content) => match serde_json::from_str::<Value>(content) {
                Ok(Value::Object(object))
                    if object.get("status").and_then(Value::as_str) == Some("rejected") =>
                {
                    ToolStatus::Rejected
                }
                Ok(Value::Object(object)) if object.contains_key("error") => ToolStatus::Error,
                _ => ToolStatus::Done,
            },
        }
    }
}

/// Text as JSON pretty-printed when it parses, else unchanged.
pub fn pretty_json(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| text.to_string())
}

/// An interrupt card's data.
#[derive(Debug, Clone, PartialEq)]
pub struct InterruptCard {
    /// The interrupt as the server sent it.
    pub interrupt: Interrupt,
    /// The control to show, read from the metadata.
    pub control: Control,
    /// The answer, once its tool result arrived.
    pub answer: Option<Answer>,
}

/// Whether the session is working, waiting for the person, or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunState {
    /// Nothing runs and nothing is asked.
    #[default]
    Idle,
    /// A run is between `RUN_STARTED` and its end.
    Running,
    /// A question waits for an answer.
    Awaiting,
}
