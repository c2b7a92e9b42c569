//! The shared state inside a run: the `STATE_SNAPSHOT` a run begins with, the model's
//! `update_state` calls (a `STATE_DELTA` committed with the call's result), and an MCP
//! tool's structured output where its `state` pointer says.

use serde_json::json;
use shared::state::SharedState;
use shared::{EventBody, ToolRole};

use super::{once_was, read, StateProblem};
use crate::agent::conversation::{History, ToolCallRecord};
use crate::agent::run::recorder::{Recorder, RunAbort};
use crate::agent::tools::{self, update_state};
use crate::agent::RunDeps;
use crate::domain::new_id;
use crate::store::{StateRead, Store};

/// How often a change is made again when another landed first.
const ATTEMPTS: usize = 8;

/// Begins the run with what the state is, once, before its first model call: the state an
/// AG-UI client sent with the run's input when the session never held it (the client's
/// edit, adopted; one it held is only stale), else the session's when it is not empty.
/// True when it appended one (the history is then to be read again).
pub(in crate::agent) async fn announce<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    history: &History,
) -> Result<bool, RunAbort> {
    if !history.snapshot_due {
        return Ok(false);
    }
    let sent = match &history.input_state {
        Some(sent) if deps.state_rules.check(sent).is_ok() => {
            let stale = once_was(&*deps.store, recorder.session(), sent).await;
            let stale = stale.map_err(|e| RunAbort::Write(e.into()))?;
            (!stale).then_some(sent)
        }
        _ => None,
    };
    let mut current = history.state.clone();
    for _ in 0..ATTEMPTS {
        let snapshot = match sent {
            Some(sent) => sent.clone(),
            None if current.is_empty() => return Ok(false),
            None => current.document().clone(),
        };
        let read = StateRead {
            last_seq: current.last_seq(),
        };
        let events = vec![EventBody::StateSnapshot { snapshot }];
        if recorder.emit_state_change(read, events).await? {
            return Ok(true);
        }
        current = reread(deps, recorder).await?;
    }
    tracing::warn!(
        run = recorder.run_id(),
        "the state kept changing; no snapshot"
    );
    Ok(false)
}

/// Runs an `update_state` call: its `STATE_DELTA` and its result in one commit. `Err`: the
/// call failed, with the error result to record.
pub(in crate::agent) async fn update<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    call: &ToolCallRecord,
    history: &History,
) -> Result<Result<(), String>, RunAbort> {
    let error = |message: String| Ok(Err(json!({ "error": message }).to_string()));
    let patch = match update_state::parse(&call.arguments) {
        Ok(patch) => patch,
        Err(message) => return error(message),
    };
    // The model reads the state itself in its next call's system prompt.
    let content = json!({ "applied": patch.len() }).to_string();
    let content = tools::truncate_result(content, deps.limits.max_tool_result_bytes);
    let result = || {
        Some(EventBody::ToolCallResult {
            message_id: new_id("msg"),
            tool_call_id: call.id.clone(),
            content: content.clone(),
            role: Some(ToolRole::Tool),
        })
    };
    match change(deps, recorder, history, &patch, result).await? {
        Changed::Done => Ok(Ok(())),
        Changed::Refused(problem) => error(format!("the patch was not applied: {problem}")),
        Changed::KeptChanging => {
            error("the state kept changing while the patch was applied; try again".into())
        }
    }
}

/// Writes an MCP tool's structured output into the shared state at `path` (its
/// `tools.<name>.state`), as a `STATE_DELTA` logged before the call's result; the result
/// content, with `stateNotUpdated` saying why when the state refused it (the schema, the
/// size, a path whose parent is missing). A result without `structuredContent` (or an
/// error) changes nothing.
pub(in crate::agent) async fn adopt_output<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    history: &History,
    path: &str,
    content: String,
) -> Result<String, RunAbort> {
    let Ok(mut result) = serde_json::from_str::<serde_json::Value>(&content) else {
        return Ok(content);
    };
    let Some(output) = result
        .get("structuredContent")
        .filter(|_| result.get("error").is_none())
    else {
        return Ok(content);
    };
    let patch = vec![json!({"op": "add", "path": path, "value": output})];
    let why = match change(deps, recorder, history, &patch, Vec::new).await? {
        Changed::Done => return Ok(content),
        Changed::Refused(problem) => problem.to_string(),
        Changed::KeptChanging => "the state kept changing; try again".to_string(),
    };
    result["stateNotUpdated"] = json!(why);
    Ok(result.to_string())
}

/// How a change of the state made in a run ended.
enum Changed {
    Done,
    /// It does not apply, or leaves a state the rules refuse.
    Refused(StateProblem),
    /// Other changes kept landing first, [`ATTEMPTS`] times.
    KeptChanging,
}

/// Commits `patch` as a `STATE_DELTA`, with what `with` makes in the same commit, against
/// the state the run folded; made again from the newer state when another change landed
/// first.
async fn change<S: Store, E: IntoIterator<Item = EventBody>>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    history: &History,
    patch: &[serde_json::Value],
    with: impl Fn() -> E,
) -> Result<Changed, RunAbort> {
    let mut current = history.state.clone();
    for _ in 0..ATTEMPTS {
        if let Err(problem) = deps.state_rules.change(current.document(), patch) {
            return Ok(Changed::Refused(problem));
        }
        let mut events = vec![EventBody::StateDelta {
            delta: patch.to_vec(),
        }];
        events.extend(with());
        let read = StateRead {
            last_seq: current.last_seq(),
        };
        if recorder.emit_state_change(read, events).await? {
            return Ok(Changed::Done);
        }
        current = reread(deps, recorder).await?;
    }
    Ok(Changed::KeptChanging)
}

/// The state as the log holds it now.
async fn reread<S: Store>(deps: &RunDeps<S>, recorder: &Recorder) -> Result<SharedState, RunAbort> {
    read(&*deps.store, recorder.session())
        .await
        .map_err(|e| RunAbort::Write(e.into()))
}
