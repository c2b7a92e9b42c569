//! The checks the kill harness runs on one session after each restart: the log is
//! contiguous and valid AG-UI, holds every frame a viewer saw unchanged, replays exactly
//! from any `after`, and every recovered run followed the continuation rules.
//!
//! Structural failures panic at once; broken recovery rules are returned as messages so
//! the harness can finish, print its summary and report them all.

use futures_util::StreamExt;
use serde_json::Value;
use shared::Event;
use tokio_tungstenite::tungstenite::Message;

use super::viewer::is_run_end;
use crate::helpers::{assert_valid_session, TestApp};

/// The marker a continued run gets.
pub const RECOVERED: &str = "tandem.run_recovered";
/// Recoveries of one run before it fails with `recovery_limit`.
const MAX_RECOVERIES: u64 = 3;

/// The whole log as raw JSON, read over REST page by page.
pub async fn raw_log(app: &TestApp, session: &str) -> Vec<(u64, Value)> {
    let mut events: Vec<(u64, Value)> = Vec::new();
    loop {
        let after = events.last().map_or(0, |e| e.0);
        let path = format!("/api/sessions/{session}/events?after={after}&limit=10000");
        let (status, body) = app.get(&path).await;
        assert_eq!(status, 200, "{body}");
        let page = body["events"].as_array().expect("an events page");
        events.extend(
            page.iter()
                .map(|e| (e["seq"].as_u64().unwrap(), e["event"].clone())),
        );
        if page.len() < 10_000 {
            return events;
        }
    }
}

/// (b) and (e): seqs are 1..N and the log passes the AG-UI rules with every run ended.
pub fn assert_contiguous_and_valid(session: &str, log: &[(u64, Value)]) {
    for (index, (seq, _)) in log.iter().enumerate() {
        assert_eq!(
            *seq,
            index as u64 + 1,
            "session {session}: seq gap or duplicate"
        );
    }
    let typed: Vec<(u64, Event)> = log
        .iter()
        .map(|(seq, e)| {
            (
                *seq,
                serde_json::from_value(e.clone()).expect("a known event"),
            )
        })
        .collect();
    assert_valid_session(&typed, true);
}

/// (a): every frame a viewer saw is in the log with the same seq and identical JSON,
/// and the viewer saw seqs 1..M once each. Returns how many frames were compared.
pub fn assert_viewer_saw_the_log(
    session: &str,
    seen: &[(u64, Value)],
    log: &[(u64, Value)],
) -> u64 {
    for (index, (seq, event)) in seen.iter().enumerate() {
        assert_eq!(
            *seq,
            index as u64 + 1,
            "session {session}: the viewer skipped or repeated"
        );
        let logged = log.get(index).unwrap_or_else(|| {
            panic!(
                "session {session}: a viewer saw seq {seq}, the log ends at {}",
                log.len()
            )
        });
        assert_eq!(logged.0, *seq);
        assert!(
            same_json(&logged.1, event),
            "session {session} seq {seq}: the viewer saw {event}, the log has {}",
            logged.1
        );
    }
    seen.len() as u64
}

/// Identical JSON: equal values with their keys in the same order.
fn same_json(a: &Value, b: &Value) -> bool {
    serde_json::to_string(a).unwrap() == serde_json::to_string(b).unwrap()
}

/// (c): a socket opened with `after=k` replays exactly `log[k..]` and then `caught_up`
/// with the last seq. The session must be quiet. Returns how many frames were compared.
pub async fn assert_replay(address: &str, session: &str, after: u64, log: &[(u64, Value)]) -> u64 {
    let url = format!("ws://{address}/api/sessions/{session}/ws?after={after}");
    let (mut socket, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("connects");
    let expected = &log[(after as usize).min(log.len())..];
    let mut frames = 0;
    loop {
        let next = tokio::time::timeout(std::time::Duration::from_secs(20), socket.next())
            .await
            .expect("a replay frame in time");
        let Some(Ok(Message::Text(text))) = next else {
            continue;
        };
        let frame: Value = serde_json::from_str(&text).unwrap();
        if frame["kind"] == "caught_up" {
            assert_eq!(
                frames,
                expected.len(),
                "session {session} after={after}: short replay"
            );
            assert_eq!(
                frame["seq"],
                log.len() as u64,
                "caught_up names the last seq"
            );
            return frames as u64 + 1;
        }
        let (seq, event) = expected
            .get(frames)
            .unwrap_or_else(|| panic!("session {session} after={after}: extra frame {frame}"));
        assert_eq!(frame["kind"], "event", "{frame}");
        assert_eq!(frame["seq"], *seq, "session {session} after={after}");
        assert!(
            same_json(&frame["event"], event),
            "session {session} seq {seq}"
        );
        frames += 1;
    }
}

/// What a session's log says about recovery.
#[derive(Debug, Default, Clone, Copy)]
pub struct Recovery {
    /// `tandem.run_recovered` markers.
    pub continued: u64,
    /// `RUN_ERROR`s of any code.
    pub failed: u64,
    /// `RUN_ERROR recovery_limit`s.
    pub limits: u64,
}

/// (d) as the log shows it: a marker sits inside the run it names with attempts 1, 2, 3;
/// after a marker the run calls the model again before it finishes; only `recovery_limit`
/// ends a run in error, after exactly three markers; nothing ends `interrupted`.
pub fn recovery_rules(session: &str, log: &[(u64, Value)], problems: &mut Vec<String>) -> Recovery {
    let mut tally = Recovery::default();
    let (mut run, mut markers, mut called_since_marker) = (String::new(), 0, true);
    let mut problem =
        |seq: u64, what: String| problems.push(format!("session {session} seq {seq}: {what}"));
    for (seq, event) in log {
        match event["type"].as_str().unwrap_or_default() {
            "RUN_STARTED" => {
                run = event["runId"].as_str().unwrap_or_default().into();
                (markers, called_since_marker) = (0, true);
            }
            "STEP_STARTED" => called_since_marker = true,
            "CUSTOM" if event["name"] == RECOVERED => {
                tally.continued += 1;
                markers += 1;
                called_since_marker = false;
                if event["value"]["runId"] != run.as_str() {
                    problem(
                        *seq,
                        format!(
                            "marker names run {} inside run {run}",
                            event["value"]["runId"]
                        ),
                    );
                }
                if event["value"]["attempt"] != markers {
                    problem(
                        *seq,
                        format!(
                            "marker attempt {} where {markers} was due",
                            event["value"]["attempt"]
                        ),
                    );
                }
                if markers > MAX_RECOVERIES {
                    problem(*seq, format!("run {run} was continued {markers} times"));
                }
            }
            "RUN_FINISHED" if !called_since_marker => problem(
                *seq,
                format!("run {run} finished after its marker without a model call"),
            ),
            "RUN_ERROR" => {
                tally.failed += 1;
                let code = event["code"].as_str().unwrap_or_default();
                if code == "recovery_limit" {
                    tally.limits += 1;
                }
                match (code, markers) {
                    ("recovery_limit", MAX_RECOVERIES) => {}
                    ("recovery_limit", n) => {
                        problem(*seq, format!("recovery_limit after {n} markers"))
                    }
                    (other, _) => {
                        problem(*seq, format!("run {run} ended RUN_ERROR {other}: {event}"))
                    }
                }
            }
            _ => {}
        }
    }
    tally
}

/// (d) at one kill: if the session's run was open when the process executing it died
/// (judged from the events stamped up to `killed_at`, the last ones the dead process
/// wrote), the next word on it is a `tandem.run_recovered` marker naming that run, or
/// `RUN_ERROR recovery_limit`; a quiet session gets no marker. A kill of another
/// instance (`hit_runner` false) asks nothing. Returns whether a run was in flight at a
/// kill of its instance.
pub fn continued_after_kill(
    session: &str,
    log: &[(u64, Value)],
    killed_at: i64,
    hit_runner: bool,
    problems: &mut Vec<String>,
) -> bool {
    let split = written_by(log, killed_at);
    let open = run_in_flight(&log[..split]);
    let next = log[split..]
        .iter()
        .find(|(_, e)| is_run_end(e) || e["type"] == "RUN_STARTED" || e["name"] == RECOVERED);
    let marker = next.filter(|(_, e)| e["name"] == RECOVERED);
    if !hit_runner {
        // Its runs went on where they were; a marker after this kill belongs to an
        // earlier kill of their instance (judged there).
        return false;
    }
    let verdict = match (&open, next) {
        (Some(run), _) if marker.is_some_and(|(_, e)| e["value"]["runId"] == *run) => None,
        (Some(_), Some((_, e))) if e["code"] == "recovery_limit" => None,
        (Some(run), next) => Some(format!("run {run} was in flight, then came {next:?}")),
        (None, _) if marker.is_some() => {
            Some(format!("a marker though no run was in flight: {marker:?}"))
        }
        (None, _) => None,
    };
    if let Some(what) = verdict {
        problems.push(format!("session {session}, kill at {killed_at} ms: {what}"));
    }
    open.is_some()
}

/// The run in flight at a kill at `killed_at` (ms since the epoch), judged from the
/// events stamped up to it: the id of the last run started, unless it had ended.
pub fn run_in_flight_at(log: &[(u64, Value)], killed_at: i64) -> Option<Value> {
    run_in_flight(&log[..written_by(log, killed_at)])
}

/// How many of the log's first events were stamped by `killed_at`.
fn written_by(log: &[(u64, Value)], killed_at: i64) -> usize {
    let stamp = |e: &Value| e["timestamp"].as_i64().unwrap_or(i64::MAX);
    log.iter()
        .position(|(_, e)| stamp(e) > killed_at)
        .unwrap_or(log.len())
}

/// The id of the run `log` leaves open, if any.
fn run_in_flight(log: &[(u64, Value)]) -> Option<Value> {
    if quiet(log) {
        return None;
    }
    let started = log.iter().rev().find(|(_, e)| e["type"] == "RUN_STARTED");
    started.map(|(_, e)| e["runId"].clone())
}

/// How the run `run` ended: its `RUN_ERROR` code, `"finished"`, or `None` while open.
pub fn run_ending(log: &[(u64, Value)], run: &Value) -> Option<String> {
    let start = log
        .iter()
        .position(|(_, e)| e["type"] == "RUN_STARTED" && e["runId"] == *run)?;
    let (_, end) = log[start..].iter().find(|(_, e)| is_run_end(e))?;
    Some(match end["type"].as_str() {
        Some("RUN_ERROR") => end["code"].as_str().unwrap_or_default().to_string(),
        _ => "finished".to_string(),
    })
}

/// Whether the session's log ends with a run end (or is empty).
pub fn quiet(log: &[(u64, Value)]) -> bool {
    log.last().is_none_or(|(_, e)| is_run_end(e))
}
