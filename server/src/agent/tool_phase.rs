//! The tool phase of a run: the last model turn's pending calls, run in order.
//!
//! `request_input` and calls that need approval (without a recorded decision) pause the
//! run: this returns the interrupt and the loop ends the run with it. Approved calls run
//! with the person's edits, rejected ones get their rejection, everything else runs
//! through the registry. A stop cancels a running tool at once.

use serde_json::json;
use shared::{EventBody, Interrupt, ToolRole};
use tokio_util::sync::CancellationToken;

use super::approval;
use super::conversation::History;
use super::recorder::{Recorder, RunAbort};
use super::run_loop::{Halt, STOPPED};
use super::tools::{self, request_input, ToolContext};
use super::RunDeps;
use crate::domain::new_id;
use crate::store::Store;

/// Runs the last turn's pending calls in order; returns the interrupt to pause on when a
/// call asks a person something or needs approval.
pub(super) async fn run_tools<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    history: &History,
    context: &ToolContext,
    cancel: &CancellationToken,
) -> Result<Result<Option<Interrupt>, Halt>, RunAbort> {
    let max_result = deps.limits.max_tool_result_bytes;
    let first_question = history
        .turn_calls
        .iter()
        .find(|call| call.name == request_input::NAME)
        .map(|call| call.id.as_str());
    for call in &history.pending {
        let content = if call.name == request_input::NAME {
            if first_question != Some(call.id.as_str()) {
                error_content(
                    "only one request_input per turn; ask again after this one is answered",
                )
            } else {
                match request_input::parse(&call.arguments, &deps.limits.schema) {
                    Ok(request) => {
                        return Ok(Ok(Some(request_input::interrupt(
                            &request,
                            &call.id,
                            deps.input_timeout_secs,
                        ))))
                    }
                    Err(message) => error_content(&message),
                }
            }
        } else {
            let arguments = match deps.tools.check(&call.name, &call.arguments) {
                Ok(arguments) => arguments,
                Err(message) => {
                    record_result(recorder, &call.id, error_content(&message), max_result).await?;
                    continue;
                }
            };
            let approval = history.approvals.get(&call.id);
            match (deps.tools.needs_approval(&call.name), approval) {
                (true, None) => {
                    let interrupt =
                        approval::interrupt(call, &arguments, &deps.tools, deps.input_timeout_secs);
                    return Ok(Ok(Some(interrupt)));
                }
                (true, Some(approval)) if !approval.approved => approval.rejection_content(),
                (_, approval) => {
                    let edited = approval.and_then(|a| a.arguments.clone());
                    let arguments = edited.clone().unwrap_or(arguments);
                    let result = tokio::select! {
                        biased;
                        _ = cancel.cancelled() => {
                            recorder.close_all(STOPPED).await?;
                            return Ok(Err(Halt::Cancelled));
                        }
                        result = deps.tools.run(&call.name, arguments, context) => result,
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
        record_result(recorder, &call.id, content, max_result).await?;
    }
    Ok(Ok(None))
}

fn error_content(message: &str) -> String {
    json!({ "error": message }).to_string()
}

/// Records a call's result, truncated to `max_bytes` with a marker if longer.
async fn record_result(
    recorder: &mut Recorder,
    tool_call_id: &str,
    content: String,
    max_bytes: usize,
) -> Result<(), RunAbort> {
    recorder
        .emit(EventBody::ToolCallResult {
            message_id: new_id("msg"),
            tool_call_id: tool_call_id.into(),
            content: tools::truncate_result(content, max_bytes),
            role: Some(ToolRole::Tool),
        })
        .await
}
