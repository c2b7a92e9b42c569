//! The model's view of the conversation for one model call: the newest whole turns that
//! fit the budget of the model called and, with `--context-strategy summarise`, a summary
//! of the turns before them.
//!
//! When the view moves it records `CUSTOM tandem.context_trimmed` (and, when summarising,
//! the `CUSTOM tandem.context_summary` made by one model call of the same engine, in the
//! same commit). A summary in the log is reused by every later call, replay, restart and
//! recovery while the view stays put: the model is never asked for it twice. A summary
//! call that fails leaves the view as plain drop (logged); one that is stopped stops the
//! run. It must not decide what the run does next.

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::halt::Halt;
use super::recorder::{Recorder, RunAbort};
use crate::agent::context::policy::budget_for;
use crate::agent::context::summary::{self, SummaryRequest};
use crate::agent::context::{self, Fitted};
use crate::agent::conversation::{ChatMessage, History};
use crate::agent::engines::{EngineError, EngineEvent};
use crate::agent::tools::ToolSpec;
use crate::agent::RunDeps;
use crate::config::context::Strategy;
use crate::store::Store;

/// The most of a budget kept for a summary, in tokens.
const SUMMARY_RESERVE: usize = 1_000;

/// What one model call sends of the conversation.
pub(super) struct View {
    pub conversation: Vec<ChatMessage>,
    pub summary: Option<String>,
}

/// What a call needs to know to draw the view.
pub(super) struct Call<'a> {
    pub system: Option<&'a str>,
    pub tools: &'a [ToolSpec],
    /// The model called, by name (the engine's own or the session's pick).
    pub model: &'a str,
    /// The session's pick, if any (a summary call goes to the same model).
    pub picked: Option<String>,
}

/// Draws the view of `history` for `call`, recording where it begins when that moved.
pub(super) async fn prepare<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    history: &History,
    call: Call<'_>,
    cancel: &CancellationToken,
) -> Result<Result<View, Halt>, RunAbort> {
    let policy = &deps.context;
    let summarising = policy.strategy == Strategy::Summarise;
    let budget = budget_for(policy, call.model);
    let conversation = &history.messages;
    let fit =
        |budget: Option<usize>| context::fit(conversation.clone(), budget, call.system, call.tools);
    let mut fitted = fit(budget);
    if summarising && fitted.dropped > 0 {
        let reserve = budget.map(|b| b - (b / 4).min(SUMMARY_RESERVE));
        fitted = fit(reserve);
    }
    let first_user = context::users_in(conversation, fitted.dropped);
    let recorded = history
        .summary
        .as_ref()
        .filter(|s| summarising && s.first_user == first_user && first_user > 0)
        .map(|s| s.text.clone());
    if first_user == history.view_start {
        return Ok(Ok(View {
            conversation: fitted.messages,
            summary: recorded,
        }));
    }
    let mut events = Vec::new();
    let mut summary = None;
    if summarising && first_user > 0 {
        let request = summary_request(history, &fitted, first_user, call.picked);
        match summarise(deps, recorder, request, cancel).await {
            Ok(Some(text)) => {
                events.push(summary::summary_event(first_user, &text, fitted.dropped));
                events.extend(recorder.usage_event());
                summary = Some(text);
            }
            Ok(None) => return Ok(Err(Halt::Cancelled)),
            Err(error) => tracing::warn!(
                run = recorder.run_id(),
                %error,
                "the summary of the turns left out failed; they are dropped without one"
            ),
        }
    }
    let tokens = budget.unwrap_or(0);
    events.push(context::trimmed_event(
        first_user,
        fitted.dropped,
        tokens,
        fitted.estimated_tokens,
    ));
    recorder.emit_all(events).await?;
    Ok(Ok(View {
        conversation: fitted.messages,
        summary,
    }))
}

/// What the summary call is given: the recorded summary and the turns after it when the
/// view moved on from it, else every turn before the new view.
fn summary_request(
    history: &History,
    fitted: &Fitted,
    first_user: usize,
    picked: Option<String>,
) -> SummaryRequest {
    let conversation = &history.messages;
    let previous = history
        .summary
        .as_ref()
        .filter(|s| s.first_user > 0 && s.first_user < first_user);
    let from = previous.map_or(0, |s| context::user_position(conversation, s.first_user));
    SummaryRequest {
        previous: previous.map(|s| s.text.clone()),
        messages: conversation[from..fitted.dropped].to_vec(),
        model: picked,
    }
}

/// Makes the summary call; `Ok(None)` when the run was stopped meanwhile. Its usage is
/// added to the run's, for the caller to record.
async fn summarise<S: Store>(
    deps: &RunDeps<S>,
    recorder: &mut Recorder,
    request: SummaryRequest,
    cancel: &CancellationToken,
) -> Result<Option<String>, EngineError> {
    let mut stream = deps.engine.summarise(request);
    let mut text = String::new();
    loop {
        let item = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Ok(None),
            item = stream.next() => item,
        };
        match item {
            None | Some(Ok(EngineEvent::Finish(_))) => break,
            Some(Err(error)) => return Err(error),
            Some(Ok(EngineEvent::TextDelta(delta))) => text.push_str(&delta),
            Some(Ok(EngineEvent::Usage(usage))) => recorder.add_usage(deps.prices.priced(usage)),
            Some(Ok(_)) => {}
        }
    }
    let text = text.trim().to_string();
    if text.is_empty() {
        return Err(EngineError {
            code: "malformed_response",
            message: "the model wrote no summary".into(),
        });
    }
    Ok(Some(summary::cut(text)))
}
