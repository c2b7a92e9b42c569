//! The kill harness's messages sent while runs work: what each session was sent, waiting
//! until nothing runs or waits, and (g) that each message ran exactly once, in order.

use serde_json::{json, Value};

use super::viewer::Viewer;
use crate::helpers::TestApp;

/// One message sent to a session.
#[derive(Debug, Clone)]
pub struct Sent {
    pub cycle: u64,
    pub text: String,
    /// `None` for the message that starts the cycle's run; else its `whileRunning`.
    pub mode: Option<&'static str>,
}

impl Sent {
    /// The message that starts cycle `cycle`'s run.
    pub fn first(cycle: u64) -> Self {
        Self {
            cycle,
            text: format!("Go on, cycle {cycle}."),
            mode: None,
        }
    }

    /// A message queued behind it.
    pub fn queued(cycle: u64, tag: char) -> Self {
        Self {
            cycle,
            text: format!("Then {cycle}-{tag}."),
            mode: Some("queue"),
        }
    }

    /// A message steering its run.
    pub fn steering(cycle: u64) -> Self {
        Self {
            cycle,
            text: format!("Also {cycle}-s."),
            mode: Some("steer"),
        }
    }
}

/// Sends a message while the session's run works (should the run have ended already, it
/// starts one, behind which the next are queued: the order holds either way).
pub async fn send(app: &TestApp, session: &str, message: &Sent) {
    let body = json!({
        "text": message.text,
        "whileRunning": message.mode,
        "clientMessageId": format!("{}-{}", session, message.text),
    });
    let (status, reply) = app
        .post(&format!("/api/sessions/{session}/messages"), body)
        .await;
    assert_eq!(status, 202, "session {session}: {reply}");
}

/// Waits until the session is quiet: its viewer caught up with a run's end, nothing runs
/// and nothing is queued, and the server's last seq is the viewer's (no run began since).
pub async fn wait_quiet(viewer: &mut Viewer, app: &TestApp) {
    loop {
        let progress = viewer.wait_run_end().await;
        let session = viewer.session.clone();
        let (_, queue) = app.get(&format!("/api/sessions/{session}/queue")).await;
        let (_, detail) = app.get(&format!("/api/sessions/{session}")).await;
        let waiting = queue["queued"].as_array().map_or(0, Vec::len);
        let running = detail["status"] == "running";
        if waiting == 0 && !running && detail["lastSeq"] == progress.last_seq {
            return;
        }
        viewer.wait_past(progress.last_seq).await;
    }
}

/// (g) Every message sent appears once as the person's message; within a cycle the queued
/// ones follow the first in the order sent, a steering one follows the first; every
/// cycle's messages come before the next cycle's.
pub fn sent_once_in_order(
    session: &str,
    log: &[(u64, Value)],
    sent: &[Sent],
    problems: &mut Vec<String>,
) {
    let said = said_by_person(log);
    let mut at = Vec::with_capacity(sent.len());
    for message in sent {
        let found: Vec<usize> = said
            .iter()
            .enumerate()
            .filter(|(_, text)| **text == message.text)
            .map(|(index, _)| index)
            .collect();
        match found.as_slice() {
            [index] => at.push(Some(*index)),
            _ => {
                problems.push(format!(
                    "session {session}: {:?} was said {} times, not once",
                    message.text,
                    found.len()
                ));
                at.push(None);
            }
        }
    }
    let placed: Vec<(&Sent, usize)> = sent
        .iter()
        .zip(at)
        .filter_map(|(message, index)| Some((message, index?)))
        .collect();
    for (message, index) in &placed {
        let first = placed
            .iter()
            .find(|(other, _)| other.cycle == message.cycle && other.mode.is_none());
        let later_queued = placed.iter().filter(|(other, _)| {
            other.cycle == message.cycle
                && other.mode == Some("queue")
                && message.mode == Some("queue")
        });
        let next_cycle = placed
            .iter()
            .find(|(other, _)| other.cycle > message.cycle && other.mode.is_none());
        if first.is_some_and(|(_, first)| first > index) {
            problems.push(format!(
                "session {session}: {:?} ran before its cycle's first message",
                message.text
            ));
        }
        if next_cycle.is_some_and(|(_, next)| next < index) {
            problems.push(format!(
                "session {session}: {:?} ran after the next cycle began",
                message.text
            ));
        }
        let sent_before = sent.iter().position(|m| m.text == message.text);
        for (other, other_index) in later_queued {
            let other_sent = sent.iter().position(|m| m.text == other.text);
            if other_sent > sent_before && other_index < index {
                problems.push(format!(
                    "session {session}: {:?} ran before {:?}, queued earlier",
                    other.text, message.text
                ));
            }
        }
    }
}

/// The text of each of the person's messages, in the log's order.
fn said_by_person(log: &[(u64, Value)]) -> Vec<String> {
    let mut said: Vec<(String, String)> = Vec::new();
    for (_, event) in log {
        match event["type"].as_str() {
            Some("TEXT_MESSAGE_START") if event["role"] == "user" => said.push((
                event["messageId"].as_str().unwrap_or_default().into(),
                String::new(),
            )),
            Some("TEXT_MESSAGE_CONTENT") => {
                let id = event["messageId"].as_str().unwrap_or_default();
                if let Some((_, text)) = said.iter_mut().rev().find(|(said_id, _)| said_id == id) {
                    text.push_str(event["delta"].as_str().unwrap_or_default());
                }
            }
            _ => {}
        }
    }
    said.into_iter().map(|(_, text)| text).collect()
}
