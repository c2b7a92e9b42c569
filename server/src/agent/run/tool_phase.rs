//! The tool phase of a run: the last model turn's pending calls, run in order.
//!
//! `request_input` and calls that need approval (without a recorded decision) pause the
//! run: this returns the interrupt and the loop ends the run with it. Approved calls run
//! with the person's edits, rejected ones get their rejection, everything else runs
//! through the registry. A stop cancels a running tool at once. An MCP call that found
//! its server down is recorded with a notice the page shows. Calls of the tools an
//! AG-UI client declared are the client's to run: once the server's own calls are done,
//! the run pauses on them all at once ([`Pause::ClientTools`]).

use std::time::Instant;

use serde_json::{json, Value};
use shared::attachments::Attachment;
use shared::{EventBody, Interrupt, ToolRole};
use tokio_util::sync::CancellationToken;

use super::approval;
use super::client_tools;
use super::halt::{Halt, STOPPED};
use super::recorder::{Recorder, RunAbort};
use super::replayed::{self, CallKind, Recording, Served, TrialCall};
use crate::agent::attached::{self, from_tools::Keeper};
use crate::agent::conversation::{History, ReplayTrial, ToolCallRecord};
use crate::agent::progress::{self, Activity};
use crate::agent::shared_state;
use crate::agent::tools::{self, request_input, update_state, ToolContext};
use crate::agent::RunDeps;
use crate::domain::new_id;
use crate::store::Store;

/// Why the tool phase pauses the run.
pub(super) enum Pause {
    /// A question or an approval: the run ends with this interrupt.
    Person(Interrupt),
    /// Calls of the client's tools: the run ends successfully with them pending, waiting
    /// on this interrupt.
    ClientTools(Interrupt),
    /// A replay's trial made a call it may not make (`super::replayed`): the run ends
    /// with `RUN_ERROR replay_stopped`, for this reason.
    ReplayStopped(String),
}

/// Runs the last turn's pending calls in order; returns why to pause when a call asks a
/// person something, needs approval, or is the client's to run.
pub(super) async fn run_tools<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    history: &History,
    context: &ToolContext,
    cancel: &CancellationToken,
    recording: Option<&Recording>,
) -> Result<Result<Option<Pause>, Halt>, RunAbort> {
    let mut for_client = Vec::new();
    let mut diverged = history.replay.as_ref().is_some_and(|trial| trial.diverged);
    let first_question = history
        .turn_calls
        .iter()
        .find(|call| call.name == request_input::NAME)
        .map(|call| call.id.as_str());
    for call in &history.pending {
        if is_client_tool(deps, history, &call.name) {
            for_client.push(call);
            continue;
        }
        if let (Some(trial), Some(recording)) = (&history.replay, recording) {
            match replay_decision(deps, trial, recording, call, &mut diverged) {
                (Served::AsUsual, event) => recorder.emit_all(event.into_iter().collect()).await?,
                (Served::Recorded(content), event) => {
                    recorder.emit_all(event.into_iter().collect()).await?;
                    record_result(deps, recorder, call, content).await?;
                    continue;
                }
                (Served::Stop(why), event) => {
                    recorder.emit_all(event.into_iter().collect()).await?;
                    let content = error_content(&format!("not run: {why}"));
                    record_result(deps, recorder, call, content).await?;
                    return Ok(Ok(Some(Pause::ReplayStopped(why))));
                }
            }
        }
        let content = if call.name == request_input::NAME {
            if first_question != Some(call.id.as_str()) {
                error_content(
                    "only one request_input per turn; ask again after this one is answered",
                )
            } else {
                match request_input::parse(&call.arguments, &deps.limits.schema) {
                    Ok(request) => {
                        return Ok(Ok(Some(Pause::Person(request_input::interrupt(
                            &request,
                            &call.id,
                            deps.input_timeout_secs,
                        )))))
                    }
                    Err(message) => error_content(&message),
                }
            }
        } else if call.name == update_state::NAME {
            match shared_state::in_run::update(deps, recorder, call, history).await? {
                Ok(()) => continue,
                Err(content) => content,
            }
        } else {
            let arguments = match deps.tools.check(&call.name, &call.arguments) {
                Ok(arguments) => arguments,
                Err(message) => {
                    let content = error_content(&message);
                    record_result(deps, recorder, call, content).await?;
                    continue;
                }
            };
            let approval = history.approvals.get(&call.id);
            match (deps.tools.needs_approval(&call.name), approval) {
                (true, None) => {
                    let interrupt =
                        approval::interrupt(call, &arguments, &deps.tools, deps.input_timeout_secs);
                    return Ok(Ok(Some(Pause::Person(interrupt))));
                }
                (true, Some(approval)) if !approval.approved => approval.rejection_content(),
                (_, approval) => {
                    let edited = approval.and_then(|a| a.arguments.clone());
                    let arguments = edited.clone().unwrap_or(arguments);
                    let call_tool = run_tool(deps, recorder, call, arguments, context, cancel);
                    let Some(result) = call_tool.await? else {
                        recorder.close_all(STOPPED).await?;
                        return Ok(Err(Halt::Cancelled));
                    };
                    match (result, edited) {
                        (Ok(value), Some(edited)) => {
                            json!({"result": value, "argumentsEditedByThePerson": edited})
                                .to_string()
                        }
                        (result, _) => tools::result_content(result),
                    }
                }
            }
        };
        // An MCP tool's structured output may feed the shared state (`tools.<name>.state`).
        let content = match deps.tools.mcp().state_path(&call.name) {
            Some(path) => {
                shared_state::in_run::adopt_output(deps, recorder, history, &path, content).await?
            }
            None => content,
        };
        // An MCP tool's images and resources become attachments of the session.
        let (content, files) = match deps.tools.mcp().has(&call.name) {
            true => keeper(deps, recorder, context).keep(content).await,
            false => (content, Vec::new()),
        };
        record_result_with(deps, recorder, call, content, files).await?;
    }
    if for_client.is_empty() {
        return Ok(Ok(None));
    }
    let interrupt = client_tools::interrupt(&for_client, deps.input_timeout_secs);
    Ok(Ok(Some(Pause::ClientTools(interrupt))))
}

/// Runs one call's tool, logging its progress reports as they come (`agent/progress.rs`);
/// `None` if the person stopped the run meanwhile.
async fn run_tool<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    call: &ToolCallRecord,
    arguments: Value,
    context: &ToolContext,
    cancel: &CancellationToken,
) -> Result<Option<Result<Value, String>>, RunAbort> {
    let (sender, mut reports) = progress::channel();
    let running = deps.tools.run(&call.name, arguments, context, Some(sender));
    tokio::pin!(running);
    let mut activity = Activity::new(&call.id);
    loop {
        let held_back = activity.due_at();
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Ok(None),
            result = &mut running => return Ok(Some(result)),
            Some(report) = reports.recv() => {
                if let Some(event) = activity.take(report, Instant::now()) {
                    recorder.emit(event).await?;
                }
            }
            _ = sleep_until(held_back), if held_back.is_some() => {
                if let Some(event) = activity.flush(Instant::now()) {
                    recorder.emit(event).await?;
                }
            }
        }
    }
}

/// Sleeps until `at` (forever without one).
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// What a replay trial's call gets (see `super::replayed`), and the divergence event to
/// record first if it is the trial's first call that differs from the record. The shared
/// state's own tool is not met with the record: it changes only the trial's own line.
fn replay_decision<S: Store>(
    deps: &RunDeps<S>,
    trial: &ReplayTrial,
    recording: &Recording,
    call: &ToolCallRecord,
    diverged: &mut bool,
) -> (Served, Option<EventBody>) {
    if call.name == update_state::NAME {
        return (Served::AsUsual, None);
    }
    let kind = if call.name == request_input::NAME {
        CallKind::Question
    } else if deps.tools.needs_approval(&call.name) || !deps.tools.idempotent(&call.name) {
        CallKind::ChangesThings
    } else {
        CallKind::ReadOnly
    };
    let arguments = replayed::arguments_of(&call.arguments);
    let place = trial.calls.iter().position(|id| *id == call.id);
    let asked = TrialCall {
        id: &call.id,
        name: &call.name,
        arguments: &arguments,
        // A call the fold did not count (it cannot happen) matches nothing.
        place: place.unwrap_or(usize::MAX),
        kind,
    };
    let decision = replayed::decide(recording, &trial.mark, &asked, *diverged);
    let event = decision.diverged.as_ref().map(replayed::diverged_event);
    *diverged |= event.is_some();
    (decision.served, event)
}

/// Whether a call names a tool the run's client declared (the server's own tools and
/// `request_input` keep their names; the input that declared the tools was refused if
/// it reused one).
fn is_client_tool<S: Store>(deps: &RunDeps<S>, history: &History, name: &str) -> bool {
    name != request_input::NAME
        && name != update_state::NAME
        && deps.tools.spec(name).is_none()
        && history.client_tools.iter().any(|tool| tool.name == name)
}

fn error_content(message: &str) -> String {
    json!({ "error": message }).to_string()
}

/// Where an MCP tool's files are kept: the session's, its owner's, under the upload limits.
fn keeper<'a, S: Store>(
    deps: &'a RunDeps<S>,
    recorder: &Recorder,
    context: &ToolContext,
) -> Keeper<'a, S> {
    Keeper {
        store: &*deps.store,
        owner: context.owner,
        session: recorder.session(),
        limits: deps.attachment_limits,
    }
}

/// Records a call's result (see [`record_result_with`]).
async fn record_result<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    call: &ToolCallRecord,
    content: String,
) -> Result<(), RunAbort> {
    record_result_with(deps, recorder, call, content, Vec::new()).await
}

/// Records a call's result, truncated to `--max-tool-result-bytes` with a marker if
/// longer, then the files it returned (`CUSTOM tandem.attachments` with its `toolCallId`);
/// an error result of an MCP tool whose server is down comes after the notice that says so
/// (`CUSTOM tandem.mcp_server_unavailable`); all in the same commit.
async fn record_result_with<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    call: &ToolCallRecord,
    content: String,
    files: Vec<Attachment>,
) -> Result<(), RunAbort> {
    let failed = serde_json::from_str::<serde_json::Value>(&content)
        .is_ok_and(|value| value.get("error").is_some());
    let notice = failed
        .then(|| deps.tools.mcp().notice(&call.name, &call.id))
        .flatten();
    let message_id = new_id("msg");
    let kept = attached::tool_event(&message_id, &call.id, &files);
    let result = EventBody::ToolCallResult {
        message_id,
        tool_call_id: call.id.clone(),
        content: tools::truncate_result(content, deps.limits.max_tool_result_bytes),
        role: Some(ToolRole::Tool),
    };
    let events = notice.into_iter().chain([result]).chain(kept).collect();
    recorder.emit_all(events).await
}
