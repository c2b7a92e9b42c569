//! Tool-call checks for the kill harness: every call gets exactly one result, a call
//! that may have been running at a crash is re-run only if its tool is idempotent (and
//! otherwise gets "outcome unknown"), and no `append_file` call ran twice, judged from
//! the file itself.
//!
//! One server replays one script for every session, so the sessions share their
//! `append_file` lines (one per turn, `turn-<i>`) and per-session lines are impossible.
//! The file check therefore counts per line: the file holds a line at least as often as
//! calls of it succeeded and at most as often as calls of it exist that may have run.
//! A re-run that this count could miss (another session's call of the same line never
//! ran) is caught in the log by [`check_recoveries`].

use std::collections::HashMap;

use serde_json::Value;

use super::log_checks::RECOVERED;

/// Tools the server may re-run after a crash.
const IDEMPOTENT: [&str; 3] = ["calculator", "clock", "write_file"];

/// How an `append_file` call of one line ended, across all sessions.
#[derive(Debug, Default, Clone, Copy)]
pub struct LineCalls {
    /// Calls with a success result: each ran exactly once.
    pub succeeded: usize,
    /// Calls that may have run once: error results, unknown outcomes, no result.
    pub maybe: usize,
}

/// Checks one session's tool calls and adds its `append_file` calls to `lines`.
pub fn check_results(
    session: &str,
    log: &[(u64, Value)],
    lines: &mut HashMap<String, LineCalls>,
    problems: &mut Vec<String>,
) {
    let mut calls: HashMap<String, (String, String)> = HashMap::new();
    let mut results: HashMap<String, Value> = HashMap::new();
    let mut unknown_since_marker: Option<u64> = None;
    for (seq, event) in log {
        let id = event["toolCallId"].as_str().unwrap_or_default().to_string();
        let kind = event["type"].as_str().unwrap_or_default();
        // An unknown outcome is written only by a repair, which ends with the marker.
        if matches!(kind, "STEP_STARTED" | "TOOL_CALL_START" | "RUN_STARTED") {
            if let Some(at) = unknown_since_marker.take() {
                problems.push(format!(
                    "session {session} seq {at}: outcome unknown outside a recovery"
                ));
            }
        }
        match kind {
            "TOOL_CALL_START" => {
                let name = event["toolCallName"].as_str().unwrap_or_default();
                calls.insert(id, (name.into(), String::new()));
            }
            "TOOL_CALL_ARGS" => {
                if let Some(call) = calls.get_mut(&id) {
                    call.1.push_str(event["delta"].as_str().unwrap_or_default());
                }
            }
            "TOOL_CALL_RESULT" => {
                let content: Value =
                    serde_json::from_str(event["content"].as_str().unwrap_or("null"))
                        .unwrap_or(Value::Null);
                let name = calls.get(&id).map_or("", |c| c.0.as_str());
                if content["outcomeUnknown"] == true {
                    if IDEMPOTENT.contains(&name) {
                        problems.push(format!(
                            "session {session} seq {seq}: idempotent `{name}` got outcome unknown"
                        ));
                    }
                    unknown_since_marker = Some(*seq);
                }
                if results.insert(id.clone(), content).is_some() {
                    problems.push(format!(
                        "session {session} seq {seq}: call {id} has a second result"
                    ));
                }
            }
            "CUSTOM" if event["name"] == RECOVERED => unknown_since_marker = None,
            _ => {}
        }
    }
    for (id, (name, arguments)) in &calls {
        let result = results.get(id);
        if result.is_none() {
            problems.push(format!(
                "session {session}: call {id} ({name}) never got a result"
            ));
        }
        if name != "append_file" {
            continue;
        }
        let line = serde_json::from_str::<Value>(arguments).unwrap_or_default()["line"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let entry = lines.entry(line).or_default();
        match result {
            Some(content) if content.get("error").is_none() => entry.succeeded += 1,
            _ => entry.maybe += 1,
        }
    }
}

/// (f): the file agrees with the calls: no line more often than its calls could write
/// it, none less often than its successes did. Returns the number of lines checked.
pub fn check_file(
    file: &str,
    lines: &HashMap<String, LineCalls>,
    problems: &mut Vec<String>,
) -> usize {
    let mut written: HashMap<&str, usize> = HashMap::new();
    for line in file.lines() {
        *written.entry(line).or_default() += 1;
    }
    for (line, count) in &written {
        let calls = lines.get(*line).copied().unwrap_or_default();
        if *count > calls.succeeded + calls.maybe {
            problems.push(format!(
                "`{line}` is in the file {count} times but only {} calls of it exist \
                 ({} succeeded): a call ran twice",
                calls.succeeded + calls.maybe,
                calls.succeeded
            ));
        }
    }
    for (line, calls) in lines {
        let count = written.get(line.as_str()).copied().unwrap_or(0);
        if count < calls.succeeded {
            problems.push(format!(
                "`{line}`: {} successful calls but {count} lines written",
                calls.succeeded
            ));
        }
    }
    written.values().sum()
}

/// At each `tandem.run_recovered` marker: the repair block (the events just before it,
/// written at restart with the marker's timestamp) gives the first unanswered call of a
/// finished model call — the only one that can have been running — an "outcome unknown"
/// result if its tool is not idempotent, and leaves it to run again if it is; any other
/// result in the block is an error for a call cut off mid-stream.
pub fn check_recoveries(
    session: &str,
    log: &[(u64, Value)],
    problems: &mut Vec<String>,
) -> Repairs {
    let mut tally = Repairs::default();
    for (marker, (seq, event)) in log.iter().enumerate() {
        if event["type"] != "CUSTOM" || event["name"] != RECOVERED {
            continue;
        }
        let stamp = &event["timestamp"];
        let block = (0..marker)
            .rev()
            .take_while(|&i| log[i].1["timestamp"] == *stamp)
            .last()
            .unwrap_or(marker);
        let run = (0..block)
            .rev()
            .find(|&i| log[i].1["type"] == "RUN_STARTED")
            .unwrap_or(0);
        let running = maybe_running(&log[run..block]);
        let mut problem =
            |what: String| problems.push(format!("session {session} marker seq {seq}: {what}"));
        let results = log[block..marker]
            .iter()
            .filter(|(_, e)| e["type"] == "TOOL_CALL_RESULT");
        for (_, result) in results {
            let id = result["toolCallId"].as_str().unwrap_or_default();
            let content: Value = serde_json::from_str(result["content"].as_str().unwrap_or("null"))
                .unwrap_or_default();
            match &running {
                Some((call, name)) if call == id && IDEMPOTENT.contains(&name.as_str()) => problem(
                    format!("idempotent `{name}` call {id} was not left to run again"),
                ),
                Some((call, _)) if call == id && content["outcomeUnknown"] != true => {
                    problem(format!("call {id} may have run but got {content}"))
                }
                Some((call, _)) if call == id => tally.unknown += 1,
                _ if content.get("error").is_none() || content["outcomeUnknown"] == true => {
                    problem(format!(
                        "call {id} could not have started but got {content}"
                    ))
                }
                _ => tally.cut_off += 1,
            }
        }
        let Some((call, name)) = &running else {
            continue;
        };
        let answered = log[block..marker]
            .iter()
            .any(|(_, e)| e["toolCallId"] == call.as_str() && e["type"] == "TOOL_CALL_RESULT");
        match (answered, IDEMPOTENT.contains(&name.as_str())) {
            (false, true) => tally.rerun += 1,
            (false, false) => problem(format!(
                "`{name}` call {call} may have run and was left to run again"
            )),
            (true, _) => {}
        }
    }
    tally
}

/// What the repairs did to tool calls, to show what the kills exercised.
#[derive(Debug, Default, Clone, Copy)]
pub struct Repairs {
    /// Non-idempotent calls that may have been running: given "outcome unknown".
    pub unknown: u64,
    /// Idempotent calls that may have been running: left to run again.
    pub rerun: u64,
    /// Calls the model was still writing: closed with an error.
    pub cut_off: u64,
}

/// The call that may have been running when the process died, with its tool: the first
/// ended, unanswered call, provided its model call had finished.
fn maybe_running(run: &[(u64, Value)]) -> Option<(String, String)> {
    let steps = |kind: &str| {
        run.iter()
            .filter(|(_, e)| e["type"] == kind && e["stepName"] == "model_call")
            .count()
    };
    if steps("STEP_STARTED") != steps("STEP_FINISHED") {
        return None;
    }
    let has = |kind: &str, id: &Value| {
        run.iter()
            .any(|(_, e)| e["type"] == kind && e["toolCallId"] == *id)
    };
    run.iter()
        .filter(|(_, e)| e["type"] == "TOOL_CALL_START")
        .find(|(_, e)| {
            has("TOOL_CALL_END", &e["toolCallId"]) && !has("TOOL_CALL_RESULT", &e["toolCallId"])
        })
        .map(|(_, e)| {
            (
                e["toolCallId"].as_str().unwrap_or_default().into(),
                e["toolCallName"].as_str().unwrap_or_default().into(),
            )
        })
}
