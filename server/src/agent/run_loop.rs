//! One run, from its first model call to its terminal event.
//!
//! Each iteration rebuilds the conversation from the log, streams one model call into
//! the log, runs the tools it asked for, and either loops, finishes, pauses on
//! `request_input` (ending the run with an interrupt; nothing stays in memory) or stops
//! when cancelled. Every exit path leaves the run closed with a terminal event.

use std::sync::Arc;

use futures_util::StreamExt;
use serde_json::json;
use shared::{EventBody, Interrupt, Outcome, ToolRole};
use tokio_util::sync::CancellationToken;

use super::conversation::{self, ToolCallRecord, MODEL_CALL_STEP};
use super::engines::{EngineError, EngineEvent, ModelRequest};
use super::recorder::{Recorder, RunAbort};
use super::tools::request_input;
use super::RunDeps;
use crate::domain::new_id;
use crate::store::Store;

/// The tool-result text of a call stopped by the person.
const STOPPED: &str = "stopped by the person before it finished";

/// How a model call or tool phase ended when it did not simply complete.
enum Halt {
    Cancelled,
    Failed(EngineError),
}

/// Drives a run to its end. Never panics on bad model output; write failures end it.
pub async fn drive<S: Store>(
    deps: Arc<RunDeps<S>>,
    mut recorder: Recorder,
    cancel: CancellationToken,
) {
    if let Err(abort) = run(&deps, &mut recorder, &cancel).await {
        match abort {
            RunAbort::SessionGone => {
                tracing::debug!(run = recorder.run_id(), "session deleted mid-run")
            }
            RunAbort::Write(error) => {
                tracing::error!(%error, run = recorder.run_id(), "run stopped: the log cannot be written")
            }
        }
    }
}

async fn run<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    cancel: &CancellationToken,
) -> Result<(), RunAbort> {
    for _ in 0..deps.max_model_calls {
        if cancel.is_cancelled() {
            return finish_cancelled(recorder).await;
        }
        let history = load_history(deps, recorder).await?;
        let request = ModelRequest {
            conversation: history.messages,
            tools: deps.tools.specs(),
            model_call_index: history.model_calls,
        };
        recorder.begin_model_call(MODEL_CALL_STEP).await?;
        let calls = match stream_model_call(deps, recorder, request, cancel).await? {
            Ok(calls) => calls,
            Err(Halt::Cancelled) => return finish_cancelled(recorder).await,
            Err(Halt::Failed(error)) => return fail(recorder, error.code, &error.message).await,
        };
        recorder
            .emit(EventBody::StepFinished {
                step_name: MODEL_CALL_STEP.into(),
            })
            .await?;
        if calls.is_empty() {
            return finish(
                recorder,
                Outcome::Success {
                    pending_tool_call_ids: None,
                },
            )
            .await;
        }
        match run_tools(deps, recorder, calls, cancel).await? {
            Ok(None) => continue,
            Ok(Some(interrupt)) => {
                return finish(
                    recorder,
                    Outcome::Interrupt {
                        interrupts: vec![interrupt],
                    },
                )
                .await
            }
            Err(_) => return finish_cancelled(recorder).await,
        }
    }
    let message = format!(
        "the run reached its limit of {} model calls without finishing",
        deps.max_model_calls
    );
    fail(recorder, "max_model_calls", &message).await
}

async fn load_history<S: Store>(
    deps: &RunDeps<S>,
    recorder: &Recorder,
) -> Result<conversation::History, RunAbort> {
    let stored = deps
        .store
        .events_after(recorder.session(), 0, u32::MAX)
        .await
        .map_err(|e| RunAbort::Write(e.into()))?;
    let events: Vec<shared::Event> = stored
        .iter()
        .filter_map(|row| serde_json::from_str(&row.json).ok())
        .collect();
    Ok(conversation::rebuild(&events))
}

/// Streams one model call into the log; returns the tool calls it made.
async fn stream_model_call<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    request: ModelRequest,
    cancel: &CancellationToken,
) -> Result<Result<Vec<ToolCallRecord>, Halt>, RunAbort> {
    let mut stream = deps.engine.stream(request);
    let mut calls: Vec<ToolCallRecord> = Vec::new();
    loop {
        let item = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Ok(Err(Halt::Cancelled)),
            item = stream.next() => item,
        };
        match item {
            None | Some(Ok(EngineEvent::Finish(_))) => break,
            Some(Err(error)) => return Ok(Err(Halt::Failed(error))),
            Some(Ok(EngineEvent::TextDelta(delta))) => recorder.text(delta).await?,
            Some(Ok(EngineEvent::ReasoningDelta(delta))) => recorder.reasoning(delta).await?,
            Some(Ok(EngineEvent::ToolCallStart { id, name })) => {
                recorder.close_content().await?;
                let parent_message_id = Some(recorder.message_id().to_string());
                recorder
                    .emit(EventBody::ToolCallStart {
                        tool_call_id: id.clone(),
                        tool_call_name: name.clone(),
                        parent_message_id,
                    })
                    .await?;
                calls.push(ToolCallRecord {
                    id,
                    name,
                    arguments: String::new(),
                });
            }
            Some(Ok(EngineEvent::ToolCallArgs { id, delta })) => {
                if let Some(call) = calls.iter_mut().find(|c| c.id == id) {
                    call.arguments.push_str(&delta);
                    recorder
                        .emit(EventBody::ToolCallArgs {
                            tool_call_id: id,
                            delta,
                        })
                        .await?;
                }
            }
            Some(Ok(EngineEvent::ToolCallEnd { id })) => {
                recorder
                    .emit(EventBody::ToolCallEnd { tool_call_id: id })
                    .await?;
            }
            Some(Ok(EngineEvent::Usage(_))) => {}
        }
    }
    recorder.close_calls().await?;
    Ok(Ok(calls))
}

/// Runs the calls in order; returns the interrupt to pause on, if one was asked for.
async fn run_tools<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    calls: Vec<ToolCallRecord>,
    cancel: &CancellationToken,
) -> Result<Result<Option<Interrupt>, Halt>, RunAbort> {
    let mut pause: Option<Interrupt> = None;
    for call in calls {
        let content = if call.name == request_input::NAME {
            match (request_input::parse(&call.arguments), &pause) {
                (Ok(request), None) => {
                    pause = Some(request_input::interrupt(&request, &call.id));
                    continue;
                }
                (Ok(_), Some(_)) => json!({"error": "only one request_input per turn; ask again after this one is answered"}).to_string(),
                (Err(message), _) => json!({ "error": message }).to_string(),
            }
        } else {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => {
                    recorder.close_all(STOPPED).await?;
                    return Ok(Err(Halt::Cancelled));
                }
                content = deps.tools.invoke(&call.name, &call.arguments) => content,
            }
        };
        recorder
            .emit(EventBody::ToolCallResult {
                message_id: new_id("msg"),
                tool_call_id: call.id,
                content,
                role: Some(ToolRole::Tool),
            })
            .await?;
    }
    Ok(Ok(pause))
}

async fn finish(recorder: &mut Recorder, outcome: Outcome) -> Result<(), RunAbort> {
    let event = EventBody::RunFinished {
        thread_id: recorder.thread_id(),
        run_id: recorder.run_id().to_string(),
        result: None,
        outcome: Some(outcome),
        usage: None,
    };
    recorder.emit(event).await
}

async fn finish_cancelled(recorder: &mut Recorder) -> Result<(), RunAbort> {
    recorder.close_all(STOPPED).await?;
    finish(recorder, Outcome::Cancelled).await
}

async fn fail(recorder: &mut Recorder, code: &str, message: &str) -> Result<(), RunAbort> {
    recorder
        .close_all("the run failed before this call finished")
        .await?;
    recorder
        .emit(EventBody::RunError {
            message: message.into(),
            code: Some(code.into()),
        })
        .await
}
