//! Progress of long tool calls, as AG-UI activity events: a tool reports how far it got
//! (an MCP server's `notifications/progress` for the call, see `mcp/mod.rs`) and the run
//! logs it while the call works: `ACTIVITY_SNAPSHOT` with the whole content first, then
//! `ACTIVITY_DELTA` (JSON Patch) with what changed, at most one every
//! [`EVERY`] per call. The activity's content is `{toolCallId, progress, total?, message?}`
//! under `activityType` [`ACTIVITY_TYPE`]; the page draws it as a bar on the call's card.
//! Progress is a view of work under way, not a record of it: a report that arrives while
//! the last one is still within [`EVERY`] is folded into the next, and the call's result,
//! not its last report, says how it ended.

use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use shared::EventBody;
use tokio::sync::mpsc;

use crate::domain::new_id;

/// The `activityType` of a tool call's progress.
pub const ACTIVITY_TYPE: &str = "progress";
/// The shortest time between two logged reports of one call.
pub const EVERY: Duration = Duration::from_millis(200);
/// Reports a call may have waiting before more are dropped (the tool never waits on them).
const WAITING: usize = 32;

/// How far a call got, as its tool reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Work done so far; grows with each report.
    pub progress: f64,
    /// The whole work, when known.
    pub total: Option<f64>,
    /// What is being done now, in the tool's words.
    pub message: Option<String>,
}

/// Where a tool sends its reports: never blocks the tool (a full queue drops the report).
#[derive(Debug, Clone)]
pub struct ProgressSender(mpsc::Sender<Report>);

impl ProgressSender {
    /// Sends a report, or drops it when the run has not taken the earlier ones yet.
    pub fn report(&self, report: Report) {
        let _ = self.0.try_send(report);
    }
}

/// A sender for a tool and the receiver the tool phase reads.
pub fn channel() -> (ProgressSender, mpsc::Receiver<Report>) {
    let (sender, receiver) = mpsc::channel(WAITING);
    (ProgressSender(sender), receiver)
}

/// One call's activity: what the log has of it so far, and when it was last written.
pub struct Activity {
    message_id: String,
    tool_call_id: String,
    /// The content as last logged (`None`: nothing logged yet).
    logged: Option<Map<String, Value>>,
    /// When a report was last logged.
    at: Option<Instant>,
    /// A report not logged yet (too soon after the last).
    due: Option<Report>,
}

impl Activity {
    /// The activity of the call `tool_call_id`.
    pub fn new(tool_call_id: &str) -> Self {
        Self {
            message_id: new_id("act"),
            tool_call_id: tool_call_id.into(),
            logged: None,
            at: None,
            due: None,
        }
    }

    /// Takes a report; returns the event to log now, if one is due.
    pub fn take(&mut self, report: Report, now: Instant) -> Option<EventBody> {
        self.due = Some(report);
        match self.at {
            Some(at) if now.duration_since(at) < EVERY => None,
            _ => self.flush(now),
        }
    }

    /// When the report held back is due (`None`: none is held back).
    pub fn due_at(&self) -> Option<Instant> {
        self.due.as_ref()?;
        Some(self.at? + EVERY)
    }

    /// The event of the report held back, if any.
    pub fn flush(&mut self, now: Instant) -> Option<EventBody> {
        let report = self.due.take()?;
        let content = self.content(&report);
        let event = match &self.logged {
            None => EventBody::ActivitySnapshot {
                message_id: self.message_id.clone(),
                activity_type: ACTIVITY_TYPE.into(),
                content: Value::Object(content.clone()),
                replace: None,
            },
            Some(before) => {
                let patch = changes(before, &content);
                if patch.is_empty() {
                    return None;
                }
                EventBody::ActivityDelta {
                    message_id: self.message_id.clone(),
                    activity_type: ACTIVITY_TYPE.into(),
                    patch,
                }
            }
        };
        self.logged = Some(content);
        self.at = Some(now);
        Some(event)
    }

    fn content(&self, report: &Report) -> Map<String, Value> {
        let mut content = Map::new();
        content.insert("toolCallId".into(), json!(self.tool_call_id));
        content.insert("progress".into(), number(report.progress));
        if let Some(total) = report.total {
            content.insert("total".into(), number(total));
        }
        if let Some(message) = &report.message {
            content.insert("message".into(), json!(message));
        }
        content
    }
}

/// A report's number as JSON (a non-finite one, which JSON cannot hold, as 0).
fn number(value: f64) -> Value {
    serde_json::Number::from_f64(value).map_or(json!(0), Value::Number)
}

/// The JSON Patch from one flat content to the next: a `replace` or `add` per changed
/// field, a `remove` per field gone.
fn changes(before: &Map<String, Value>, after: &Map<String, Value>) -> Vec<Value> {
    let mut patch = Vec::new();
    for (key, value) in after {
        match before.get(key) {
            Some(old) if old == value => {}
            Some(_) => {
                patch.push(json!({"op": "replace", "path": format!("/{key}"), "value": value}))
            }
            None => patch.push(json!({"op": "add", "path": format!("/{key}"), "value": value})),
        }
    }
    for key in before.keys().filter(|key| !after.contains_key(*key)) {
        patch.push(json!({"op": "remove", "path": format!("/{key}")}));
    }
    patch
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(progress: f64, message: Option<&str>) -> Report {
        Report {
            progress,
            total: Some(4.0),
            message: message.map(Into::into),
        }
    }

    #[test]
    fn the_first_report_is_a_snapshot_and_later_ones_patch_what_changed() {
        let start = Instant::now();
        let mut activity = Activity::new("c1");
        let Some(EventBody::ActivitySnapshot {
            content,
            activity_type,
            ..
        }) = activity.take(report(1.0, Some("reading")), start)
        else {
            panic!("a snapshot first")
        };
        assert_eq!(activity_type, "progress");
        assert_eq!(
            content,
            json!({"toolCallId": "c1", "progress": 1.0, "total": 4.0, "message": "reading"})
        );
        // Too soon: held back, then folded into the next report that is due.
        assert_eq!(activity.take(report(2.0, Some("reading")), start), None);
        assert_eq!(activity.due_at(), Some(start + EVERY));
        let later = start + EVERY;
        let Some(EventBody::ActivityDelta { patch, .. }) = activity.take(report(3.0, None), later)
        else {
            panic!("a delta")
        };
        assert_eq!(
            patch,
            [
                json!({"op": "replace", "path": "/progress", "value": 3.0}),
                json!({"op": "remove", "path": "/message"})
            ]
        );
        assert_eq!(activity.due_at(), None, "nothing held back");
        // The same report again changes nothing, so nothing is logged.
        assert_eq!(activity.take(report(3.0, None), later + EVERY), None);
    }

    #[test]
    fn applying_the_events_in_order_gives_the_last_report() {
        let start = Instant::now();
        let mut activity = Activity::new("c1");
        let mut content = Value::Null;
        for (step, at) in [(1.0, 0), (2.0, 250), (4.0, 500)] {
            let at = start + Duration::from_millis(at);
            match activity.take(report(step, Some(&format!("step {step}"))), at) {
                Some(EventBody::ActivitySnapshot { content: whole, .. }) => content = whole,
                Some(EventBody::ActivityDelta { patch, .. }) => {
                    content = shared::state::apply(&content, &patch).unwrap();
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            content,
            json!({"toolCallId": "c1", "progress": 4.0, "total": 4.0, "message": "step 4"})
        );
    }
}
