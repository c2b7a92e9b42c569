//! One run, from its first model call to its terminal event.
//!
//! Each iteration rebuilds the conversation from the log. If the last model turn has
//! calls without results, it runs them in order, pausing (ending the run with an
//! interrupt; nothing stays in memory) on `request_input` or on a call that needs a
//! person's approval. Otherwise it streams one model call into the log and finishes if
//! the model called no tool. A resumed run picks up the remaining calls the same way.
//! Every exit path leaves the run closed with a terminal event: a run that panics ends
//! with `RUN_ERROR internal`, one that reaches its event limit with `max_run_events`.
//!
//! Before its first model call a run takes one of the server's run slots and learns whom
//! it works for ([`super::run_setup`]); before each, it draws the model's view of the
//! conversation ([`super::view`]), after the person's steering messages join the run
//! ([`super::steering`]).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::{FutureExt, StreamExt};
use shared::{EventBody, Interrupt, Outcome};
use tokio_util::sync::CancellationToken;

use super::client_tools;
use super::halt::{Halt, STOPPED};
use super::recorder::{Recorder, RunAbort};
use super::replayed::Recording;
use super::run_setup::{take_slot, tool_context};
use super::tool_phase::{self, Pause};
use super::view;
use crate::agent::attached;
use crate::agent::budget;
use crate::agent::budget_turn::{self, NextCall};
use crate::agent::conversation::{self, MODEL_CALL_STEP};
use crate::agent::engines::{EngineEvent, ModelRequest};
use crate::agent::fallback;
use crate::agent::instructions::recorded::record_person;
use crate::agent::prompt;
use crate::agent::shared_state;
use crate::agent::slots::Admission;
use crate::agent::RunDeps;
use crate::metrics::{ModelLabels, METRICS};
use crate::store::Store;

/// How long a run keeps trying to record its failure after a storage error.
const STORAGE_GIVE_UP: std::time::Duration = std::time::Duration::from_secs(15 * 60);
/// What viewers read when a run failed on a bug.
const INTERNAL: &str = "the run failed unexpectedly; the error has been logged";

/// Drives a run to its end. Never panics on bad model output. When the log cannot be
/// written (a busy or full database past the writer's retries), it keeps trying, with
/// backoff and for a bounded time, to end the run with `RUN_ERROR storage_unavailable`,
/// so the session recovers by itself when the condition clears.
pub async fn drive<S: Store>(
    deps: Arc<RunDeps<S>>,
    mut recorder: Recorder,
    cancel: CancellationToken,
    admission: Admission,
) {
    let outcome = AssertUnwindSafe(run(&deps, &mut recorder, &cancel, admission))
        .catch_unwind()
        .await;
    let mut result = match outcome {
        Ok(result) => result,
        Err(panic) => {
            let what = crate::telemetry::panic_text(&*panic);
            tracing::error!(
                run = recorder.run_id(),
                panic = what,
                "a run panicked; ending it"
            );
            recorder.lift_event_limit();
            fail(&mut recorder, "internal", INTERNAL).await
        }
    };
    if let Err(RunAbort::EventLimit(max)) = result {
        recorder.lift_event_limit();
        let message = format!("the run reached its limit of {max} events without finishing");
        result = fail(&mut recorder, "max_run_events", &message).await;
    }
    match result {
        Ok(()) => {}
        Err(RunAbort::SessionGone) => {
            tracing::debug!(run = recorder.run_id(), "session deleted mid-run")
        }
        // Fenced off: the run goes on elsewhere; nothing more is written from here.
        Err(RunAbort::LeaseLost) => fenced_off(&recorder),
        Err(RunAbort::Halted) => tracing::info!(
            run = recorder.run_id(),
            "the process is stopping: the run stopped at a safe point and goes on at the next start or on another instance"
        ),
        Err(RunAbort::EventLimit(_)) => unreachable!("the limit was lifted"),
        Err(RunAbort::Write(error)) => {
            tracing::error!(%error, run = recorder.run_id(), "the log cannot be written; ending the run once it can");
            end_after_storage_failure(&mut recorder, deps.lifecycle.halting()).await;
        }
    }
}

/// Says why a run stops here: another instance holds its lease now.
fn fenced_off(recorder: &Recorder) {
    tracing::warn!(
        run = recorder.run_id(),
        "another instance took this run over; stopping it here"
    );
}

/// Retries ending the run as failed until the log accepts it (or gives up after
/// [`STORAGE_GIVE_UP`]; the next start then repairs the run).
async fn end_after_storage_failure(recorder: &mut Recorder, halting: &CancellationToken) {
    let started = std::time::Instant::now();
    let mut wait = std::time::Duration::from_secs(1);
    let message = "the event log could not be written (the database was busy or full); \
                   this run stopped. Send a message to continue.";
    recorder.lift_event_limit();
    while started.elapsed() < STORAGE_GIVE_UP {
        tokio::select! {
            // The next start repairs the run.
            _ = halting.cancelled() => return,
            _ = tokio::time::sleep(wait) => {}
        }
        match fail(recorder, "storage_unavailable", message).await {
            // A write that failed while this instance was frozen or cut off may be followed
            // by the discovery that another instance has taken the run over meanwhile.
            Err(RunAbort::LeaseLost) => return fenced_off(recorder),
            Ok(()) | Err(RunAbort::SessionGone | RunAbort::EventLimit(_) | RunAbort::Halted) => {
                return
            }
            Err(RunAbort::Write(_)) => wait = (wait * 2).min(std::time::Duration::from_secs(30)),
        }
    }
    tracing::error!(
        run = recorder.run_id(),
        "gave up ending the run; the next start repairs it"
    );
}

async fn run<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    cancel: &CancellationToken,
    admission: Admission,
) -> Result<(), RunAbort> {
    // The run's own child of the process's stop: runs wait on it every token, and a
    // token of its own keeps them from contending for one shared waiter list.
    let halting = &deps.lifecycle.halting().child_token();
    let Some(_slot) = take_slot(recorder, admission, (cancel, halting)).await? else {
        return finish_cancelled(recorder).await;
    };
    let context = tool_context(deps, recorder).await?;
    // The person's own tools join the server's for this run.
    let with_own = deps.for_owner(context.owner).await;
    let deps = &*with_own;
    let mut model_calls = 0;
    // The person's own instructions are read once a run, before its first model call.
    let mut instructions_read = false;
    // The conversation so far; each iteration folds in only what was appended since.
    let mut folded = conversation::Folded::default();
    // The attachments model calls send, read and prepared once per run.
    let mut attachments = attached::Loader::default();
    // A replay trial's record, read once a run at its first tool phase.
    let mut recording: Option<Recording> = None;
    loop {
        if cancel.is_cancelled() {
            return finish_cancelled(recorder).await;
        }
        if halting.is_cancelled() {
            return stop_here(recorder).await;
        }
        let history = load_history(deps, recorder, &mut folded).await?;
        if shared_state::in_run::announce(deps, recorder, &history).await? {
            continue;
        }
        if !history.pending.is_empty() {
            if let (Some(trial), None) = (&history.replay, &recording) {
                let read = Recording::load(&*deps.store, &trial.mark).await;
                recording = Some(read.map_err(|e| RunAbort::Write(e.into()))?);
            }
            let recorded = recording.as_ref().filter(|_| history.replay.is_some());
            let phase = tool_phase::run_tools(deps, recorder, &history, &context, cancel, recorded);
            match phase.await? {
                Ok(None) => continue,
                Ok(Some(Pause::Person(interrupt))) => {
                    let interrupts = vec![interrupt];
                    return finish(recorder, Outcome::Interrupt { interrupts }).await;
                }
                Ok(Some(Pause::ClientTools(interrupt))) => {
                    return finish_for_client(recorder, interrupt).await
                }
                Ok(Some(Pause::ReplayStopped(why))) => {
                    return fail(recorder, "replay_stopped", &why).await
                }
                Err(_) => return finish_cancelled(recorder).await,
            }
        }
        // Messages the person sent to steer the run join it here, after the calls in
        // flight; the next pass folds them in.
        if super::steering::take_steering(deps, recorder).await? {
            continue;
        }
        if !instructions_read {
            instructions_read = true;
            let given = &history.instructions;
            if record_person(deps, recorder, given, context.owner).await? {
                continue;
            }
        }
        if model_calls == deps.limits.max_model_calls {
            let message = format!(
                "the run reached its limit of {} model calls without finishing",
                deps.limits.max_model_calls
            );
            return fail(recorder, "max_model_calls", &message).await;
        }
        // The user's turn to call the model (held until this call's usage is committed,
        // at the end of this pass) while a cap applies to them; see `budget_turn`.
        let _turn = match history.budget_overrun {
            true => None,
            false => {
                let admitted = budget_turn::admit(
                    &deps.store,
                    &deps.budgets,
                    context.owner,
                    (cancel, halting),
                );
                match admitted.await.map_err(|e| RunAbort::Write(e.into()))? {
                    NextCall::Go(turn) => turn,
                    NextCall::Reached(reached) => {
                        return stop_at_budget(deps, recorder, &reached).await
                    }
                    NextCall::Stopped if cancel.is_cancelled() => {
                        return finish_cancelled(recorder).await
                    }
                    NextCall::Stopped => return stop_here(recorder).await,
                }
            }
        };
        model_calls += 1;
        let mut tools = deps.tools.specs();
        tools.extend(history.client_tools.clone());
        let replay = history.replay.as_ref().map(|trial| &trial.mark);
        let configured = match replay.and_then(|mark| mark.system_prompt.as_deref()) {
            Some(prompt) => Some(prompt),
            None => deps.system_prompt.as_deref(),
        };
        let temperature = replay.and_then(|mark| mark.temperature);
        let system = prompt::for_call(
            configured,
            &history.instructions,
            history.client_context.as_ref(),
            history.state.document(),
        );
        // A model picked earlier that is no longer configured falls back to the default.
        let model = history.model.clone().filter(|m| deps.models.contains(m));
        let info = deps.engine.info();
        let called_model = model.clone().unwrap_or_else(|| info.model.clone());
        let call = view::Call {
            system: system.as_deref(),
            tools: &tools,
            model: &called_model,
            picked: model.clone(),
        };
        let mut view = match view::prepare(deps, recorder, &history, call, cancel).await? {
            Ok(view) => view,
            Err(_) => return finish_cancelled(recorder).await,
        };
        let mut accepts = deps.engine.accepts();
        accepts.images &= deps.image_models.takes_images(&called_model);
        attachments.accepting(accepts);
        // Collected: a borrowing iterator would not be `Send` across the reads' awaits.
        let attached: Vec<_> = view
            .conversation
            .iter_mut()
            .flat_map(|m| m.attachments_mut())
            .collect();
        let filled = attachments.fill(&*deps.store, attached);
        filled.await.map_err(|e| RunAbort::Write(e.into()))?;
        let request = ModelRequest {
            model,
            system,
            conversation: view.conversation,
            tools,
            model_call_index: history.model_calls,
            summary: view.summary,
            temperature,
        };
        recorder.begin_model_call(MODEL_CALL_STEP).await?;
        let labels = ModelLabels {
            model: request.model.clone().unwrap_or(info.model),
            provider: info.kind,
        };
        let (called, labels) =
            call_model(deps, recorder, request, labels, (cancel, halting)).await?;
        let called_tools = match called {
            Ok(called_tools) => called_tools,
            Err(Halt::Cancelled) => return finish_cancelled(recorder).await,
            Err(Halt::Stopping) => return stop_here(recorder).await,
            Err(Halt::Failed { error, .. }) => {
                METRICS.provider_error(&labels.provider, error.code);
                return fail(recorder, error.code, &error.message).await;
            }
        };
        let mut ending: Vec<EventBody> = recorder.usage_event().into_iter().collect();
        ending.push(EventBody::StepFinished {
            step_name: MODEL_CALL_STEP.into(),
        });
        recorder.emit_all(ending).await?;
        if !called_tools {
            let outcome = Outcome::Success {
                pending_tool_call_ids: None,
            };
            return finish(recorder, outcome).await;
        }
    }
}

async fn load_history<S: Store>(
    deps: &RunDeps<S>,
    recorder: &Recorder,
    folded: &mut conversation::Folded,
) -> Result<conversation::History, RunAbort> {
    let stored = deps
        .store
        .events_after(recorder.session(), folded.last_seq(), u32::MAX)
        .await
        .map_err(|e| RunAbort::Write(e.into()))?;
    for row in &stored {
        let event: Option<shared::Event> = serde_json::from_str(&row.json).ok();
        folded.observe(row.seq, event.as_ref());
    }
    Ok(folded.history())
}

/// Makes one model call, falling back to the next of `--fallback-models` while the model
/// called fails before its first token (recorded, see `agent/fallback.rs`); the outcome
/// and the labels of the model that made the last attempt.
async fn call_model<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    mut request: ModelRequest,
    mut labels: ModelLabels,
    stops: (&CancellationToken, &CancellationToken),
) -> Result<(Result<bool, Halt>, ModelLabels), RunAbort> {
    let mut tried = vec![labels.model.clone()];
    loop {
        // A copy to call again with only when a list says there may be another model:
        // the conversation is not copied for every call.
        let spare = (!deps.fallbacks.is_empty()).then(|| request.clone());
        let started = std::time::Instant::now();
        let streamed = stream_model_call(deps, recorder, request, stops);
        let (called, retries) = crate::agent::engines::http::counting_retries(streamed).await;
        let called = called?;
        recorder.retried(retries);
        let error = match &called {
            Err(Halt::Failed { error, .. }) => Some(error.code),
            _ => None,
        };
        METRICS.model_call(
            labels.clone(),
            started.elapsed(),
            recorder.call_usage(),
            error,
        );
        let Err(Halt::Failed {
            error,
            before_output: true,
        }) = &called
        else {
            return Ok((called, labels));
        };
        let next = deps.fallbacks.next(error, &tried).map(str::to_string);
        let (Some(next), Some(spare)) = (next, spare) else {
            return Ok((called, labels));
        };
        METRICS.provider_error(&labels.provider, error.code);
        METRICS.model_fallback(&labels.model, &next);
        tracing::warn!(
            from = labels.model,
            to = next,
            code = error.code,
            "falling back to another model"
        );
        recorder
            .emit(fallback::switched(&labels.model, &next, error))
            .await?;
        tried.push(next.clone());
        request = spare;
        request.model = Some(next.clone());
        labels.model = next;
    }
}

/// Streams one model call into the log; returns whether it called tools.
async fn stream_model_call<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    request: ModelRequest,
    (cancel, halting): (&CancellationToken, &CancellationToken),
) -> Result<Result<bool, Halt>, RunAbort> {
    let mut stream = deps.engine.stream(request);
    let mut calls: Vec<String> = Vec::new();
    // Whether the model produced anything yet (a failure before that may fall back).
    let mut produced = false;
    // Waited on for the whole call, not made again for every token.
    let (stopped, halted) = (cancel.cancelled(), halting.cancelled());
    tokio::pin!(stopped, halted);
    loop {
        let item = tokio::select! {
            biased;
            _ = &mut stopped => return Ok(Err(Halt::Cancelled)),
            _ = &mut halted => return Ok(Err(Halt::Stopping)),
            item = stream.next() => item,
        };
        if matches!(
            item,
            Some(Ok(EngineEvent::TextDelta(_)
                | EngineEvent::ReasoningDelta(_)
                | EngineEvent::ToolCallStart { .. }
                | EngineEvent::RedactedReasoning { .. }))
        ) {
            produced = true;
        }
        match item {
            Some(Ok(EngineEvent::Finish(reason))) => {
                recorder.finished_because(reason.as_str());
                break;
            }
            None => break,
            Some(Err(error)) => {
                let before_output = !produced;
                return Ok(Err(Halt::Failed {
                    error,
                    before_output,
                }));
            }
            Some(Ok(EngineEvent::TextDelta(delta))) => recorder.text(delta).await?,
            Some(Ok(EngineEvent::ReasoningDelta(delta))) => recorder.reasoning(delta).await?,
            Some(Ok(EngineEvent::ReasoningEnd { signature })) => {
                recorder.end_reasoning(signature).await?
            }
            Some(Ok(EngineEvent::RedactedReasoning { data })) => {
                recorder.redacted_reasoning(data).await?
            }
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
                calls.push(id);
            }
            Some(Ok(EngineEvent::ToolCallArgs { id, delta })) => {
                if calls.contains(&id) {
                    recorder
                        .emit(EventBody::ToolCallArgs {
                            tool_call_id: id,
                            delta,
                        })
                        .await?;
                }
            }
            Some(Ok(EngineEvent::ToolCallEnd { id })) if calls.contains(&id) => {
                recorder
                    .emit(EventBody::ToolCallEnd { tool_call_id: id })
                    .await?;
            }
            Some(Ok(EngineEvent::ToolCallEnd { .. })) => {}
            Some(Ok(EngineEvent::Usage(usage))) => recorder.add_usage(deps.prices.priced(usage)),
        }
    }
    recorder.close_calls().await?;
    Ok(Ok(!calls.is_empty()))
}

/// Ends a run that reached its user's budget: failed, or paused for its person
/// (`--budget-overrun`).
async fn stop_at_budget<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    reached: &[shared::budget::BudgetLine],
) -> Result<(), RunAbort> {
    METRICS.budget_stop(deps.budgets.overrun.pauses());
    if !deps.budgets.overrun.pauses() {
        return fail(recorder, budget::CODE, &budget::describe(reached)).await;
    }
    let interrupts = vec![budget::interrupt(reached, deps.budgets.overrun)];
    finish(recorder, Outcome::Interrupt { interrupts }).await
}

async fn finish(recorder: &mut Recorder, outcome: Outcome) -> Result<(), RunAbort> {
    let event = EventBody::RunFinished {
        thread_id: recorder.thread_id(),
        run_id: recorder.run_id().to_string(),
        result: None,
        outcome: Some(outcome),
        usage: recorder.usage().map(|usage| vec![usage]),
    };
    recorder.emit(event).await
}

/// Ends the run successfully with the client's calls pending, raising the interrupt
/// their results answer in the same commit.
async fn finish_for_client(recorder: &mut Recorder, interrupt: Interrupt) -> Result<(), RunAbort> {
    let pending_tool_call_ids = Some(client_tools::call_ids(&interrupt));
    let finished = EventBody::RunFinished {
        thread_id: recorder.thread_id(),
        run_id: recorder.run_id().to_string(),
        result: None,
        outcome: Some(Outcome::Success {
            pending_tool_call_ids,
        }),
        usage: recorder.usage().map(|usage| vec![usage]),
    };
    recorder
        .emit_all(vec![client_tools::pending_event(&interrupt), finished])
        .await
}

/// Stops the run where it is because the process is stopping: what it sent is committed,
/// nothing else is written (the next start, or another instance, repairs the log and
/// continues the run as after a crash).
async fn stop_here(recorder: &mut Recorder) -> Result<(), RunAbort> {
    recorder.settle().await?;
    Err(RunAbort::Halted)
}

async fn finish_cancelled(recorder: &mut Recorder) -> Result<(), RunAbort> {
    recorder.close_all(STOPPED).await?;
    log_usage(recorder).await?;
    finish(recorder, Outcome::Cancelled).await
}

async fn fail(recorder: &mut Recorder, code: &str, message: &str) -> Result<(), RunAbort> {
    recorder
        .close_all("the run failed before this call finished")
        .await?;
    log_usage(recorder).await?;
    recorder
        .emit(EventBody::RunError {
            message: message.into(),
            code: Some(code.into()),
        })
        .await
}

/// Logs the usage of a model call that ended early (stopped or failed), if it reported any.
async fn log_usage(recorder: &mut Recorder) -> Result<(), RunAbort> {
    match recorder.usage_event() {
        Some(event) => recorder.emit(event).await,
        None => Ok(()),
    }
}
