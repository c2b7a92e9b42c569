//! Transcript rows that are text: the person's messages, the agent's streamed answers,
//! reasoning spans, run errors, cancel markers, usage lines and notices.
//!
//! Each reads its one item signal, so a new token re-renders one text node. A finished
//! answer has a Copy button (its Markdown source), thumbs to rate it and, when it is the
//! last answer of a stopped run and nothing runs, a Continue button: a run of its own
//! (`POST …/runs/{runId}/continue`) whose text writes on in the same answer, with no
//! message of the person's in the transcript. An answer a restart cut off is shown
//! collapsed and muted under "Interrupted by a restart"; the recovered run's answer after
//! it is the answer.

use leptos::prelude::*;

use super::attach::AttachedFiles;
use super::copy_code::{copy_text, COPIED_FOR};
use super::on_first_use::warm;
use super::rating::RateAnswer;
use super::replay_dialog::{preload_replay_dialog, ReplayDialogHost};
use super::run_timeline::RunTimeline;
use super::text_box::submit_keys;
use crate::api::ConnState;
use crate::markdown;
use crate::state::keys::TextBox;
use crate::state::transcript::USAGE_KEY;
use crate::state::{usage, use_models, use_session, Item, ItemBody, Models, RunState};

/// A message the person sent; above it, when the model's view begins here, a note saying
/// so and the summary of the earlier turns the model is sent instead, if one was made.
#[component]
pub fn UserMessage(item: Signal<Item>) -> impl IntoView {
    let session = use_session();
    let editing = RwSignal::new(false);
    let draft = RwSignal::new(String::new());
    // A message of the person's can be edited when nothing runs: the edit is a branch.
    let can_branch = move || {
        !session.read_only
            && session.run().get() == RunState::Idle
            && session.connection().get() == ConnState::Live
            && item.with(|item| item.key.starts_with("msg:"))
    };
    let submit = move || {
        let text = draft.get_untracked();
        if text.trim().is_empty() {
            return;
        }
        editing.set(false);
        let key = item.with_untracked(|item| item.key.clone());
        session.edit(&key, text);
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        submit();
    };
    let enter = submit_keys(TextBox::Prose, submit);
    let keys = move |ev: leptos::ev::KeyboardEvent| match ev.key().as_str() {
        "Escape" => editing.set(false),
        _ => enter(ev),
    };
    let summary = move || {
        item.with(|item| match &item.body {
            ItemBody::User {
                summary: Some(text),
                view_start: true,
                ..
            } => Some(text.clone()),
            _ => None,
        })
    };
    let attachments = move || {
        item.with(|item| match &item.body {
            ItemBody::User { attachments, .. } if !attachments.is_empty() => {
                Some(attachments.clone())
            }
            _ => None,
        })
    };
    let view_start = move || {
        item.with(|item| {
            matches!(
                item.body,
                ItemBody::User {
                    view_start: true,
                    ..
                }
            )
        })
    };
    view! {
        <Show when=view_start>
            <div class="context-start" role="note" data-testid="context-start">
                "The model sees the conversation from here on; earlier messages no longer fit its context window."
            </div>
            {move || summary().map(|text| view! {
                <p class="context-summary" role="note" data-testid="context-summary">
                    <strong>"What the model is told of them: "</strong>
                    {text}
                </p>
            })}
        </Show>
        <div class="row row-user">
            <Show
                when=move || editing.get()
                fallback=move || view! {
                    <div class="user-turn">
                        <div class="bubble bubble-user" data-testid="user-message">
                            {move || item.with(|item| item.text().to_string())}
                            {move || attachments().map(|attachments| view! { <AttachedFiles attachments /> })}
                        </div>
                        <Show when=can_branch>
                            <button
                                type="button"
                                class="answer-action message-edit"
                                aria-label="Edit this message"
                                title="Edit this message: a new branch runs from here; this one stays"
                                on:click=move |_| {
                                    draft.set(item.with_untracked(|item| item.text().to_string()));
                                    editing.set(true);
                                }
                            >"Edit"</button>
                        </Show>
                    </div>
                }
            >
                <form class="message-editor" data-testid="message-editor" on:submit=save>
                    <textarea
                        class="input message-editor-text"
                        aria-label="Edit your message"
                        prop:value=move || draft.get()
                        on:input=move |ev| draft.set(event_target_value(&ev))
                        on:keydown=keys
                        autofocus
                    ></textarea>
                    <div class="message-editor-actions">
                        <button type="button" class="btn btn-quiet" on:click=move |_| editing.set(false)>"Cancel"</button>
                        <button type="submit" class="btn" disabled=move || draft.with(|d| d.trim().is_empty())>"Save and run"</button>
                    </div>
                </form>
            </Show>
        </div>
    }
}

/// The agent's answer as Markdown, re-rendered as it streams; shows a cursor meanwhile,
/// and its actions once it is finished. A part a restart cut off shows collapsed instead.
///
/// The HTML comes from [`markdown::to_html`], which escapes everything the model wrote, so
/// setting it as `innerHTML` cannot run or render anything from the model.
#[component]
pub fn AssistantMessage(item: Signal<Item>) -> impl IntoView {
    let streaming = Memo::new(move |_| item.with(Item::is_streaming));
    let interrupted = Memo::new(move |_| item.with(Item::is_interrupted));
    let html = Memo::new(move |_| item.with(|item| markdown::to_html(item.text())));
    let answer = move || {
        if interrupted.get() {
            return view! {
                <details class="answer-interrupted" data-testid="interrupted-answer">
                    <summary>
                        "Interrupted by a restart"
                        <span class="answer-interrupted-hint">
                            " · the answer was cut off here and given again below"
                        </span>
                    </summary>
                    <div class="bubble bubble-assistant bubble-interrupted markdown" inner_html=move || html.get()></div>
                </details>
            }
            .into_any();
        }
        view! {
            <div class="answer">
                <div
                    class="bubble bubble-assistant markdown"
                    class:streaming=move || streaming.get()
                    data-testid="assistant-message"
                    inner_html=move || html.get()
                ></div>
                <Show when=move || !streaming.get() && item.with(|item| !item.text().trim().is_empty())>
                    <AnswerActions item />
                </Show>
            </div>
        }
        .into_any()
    };
    view! { <div class="row row-assistant">{answer}</div> }
}

/// Under a finished answer: Copy (the Markdown source) and, for the last answer of a
/// stopped run while nothing runs, Continue.
#[component]
fn AnswerActions(item: Signal<Item>) -> impl IntoView {
    let session = use_session();
    let copied = RwSignal::new(false);
    let copy = move |_| {
        item.with_untracked(|item| copy_text(item.text()));
        copied.set(true);
        set_timeout(move || copied.set(false), COPIED_FOR);
    };
    // Set once Continue was sent, until the run it starts takes the mark off the answer;
    // a refusal from the server (its notice) offers it again.
    let sent = RwSignal::new(false);
    Effect::new(move |_| {
        if session.notice().with(Option::is_some) {
            sent.set(false);
        }
    });
    let can_continue = move || {
        item.with(Item::is_continuable)
            && !session.read_only
            && !sent.get()
            && session.run().get() == RunState::Idle
            && session.connection().get() == ConnState::Live
    };
    let run_id = item.with_untracked(|item| session.run_of(&item.key));
    let can_regenerate = {
        let known = run_id.is_some();
        move || {
            known
                && !session.read_only
                && session.run().get() == RunState::Idle
                && session.connection().get() == ConnState::Live
        }
    };
    let regenerate = {
        let run_id = run_id.clone();
        move |model: Option<String>| {
            if let Some(run) = run_id.clone() {
                session.regenerate(run, model);
            }
        }
    };
    let regenerate_here = {
        let regenerate = regenerate.clone();
        move |_| regenerate(None)
    };
    // When the server offers several models, a menu regenerates on another one.
    let models = StoredValue::new(use_models());
    let model_menu = move || {
        let choices = models.get_value().and_then(Models::choices)?;
        let regenerate = regenerate.clone();
        let options = choices
            .into_iter()
            .map(|model| view! { <option value=model.clone()>{model.clone()}</option> })
            .collect_view();
        Some(view! {
            <select
                class="model-picker answer-model"
                aria-label="Regenerate with another model"
                title="Run this answer's message again on another model: a new branch"
                on:change=move |ev| {
                    let model = event_target_value(&ev);
                    if !model.is_empty() {
                        regenerate(Some(model));
                    }
                }
            >
                <option value="" selected=true>"with…"</option>
                {options}
            </select>
        })
    };

    // "Replay…": its dialog, for this answer's run.
    let replay_open = RwSignal::new(false);
    let replay_host = {
        let session_id = session.id().get_untracked().unwrap_or_default();
        run_id
            .clone()
            .map(|run| view! { <ReplayDialogHost open=replay_open session=session_id run /> })
    };
    let continue_answer = move |_| {
        sent.set(true);
        session.continue_stopped();
    };
    view! {
        <div class="answer-actions">
            <button
                type="button"
                class="answer-action"
                aria-label=move || if copied.get() { "Copied" } else { "Copy answer" }
                title="Copy this answer as Markdown"
                on:click=copy
            >
                {move || if copied.get() { "Copied" } else { "Copy" }}
            </button>
            <Show when=can_regenerate>
                <button
                    type="button"
                    class="answer-action answer-regenerate"
                    title="Run this answer's message again: a new branch; this one stays"
                    on:click=regenerate_here.clone()
                >
                    "Regenerate"
                </button>
                {model_menu.clone()}
                <button
                    type="button"
                    class="answer-action answer-replay"
                    aria-haspopup="dialog"
                    title="Send this answer's message again, k times on the models you pick, and compare"
                    on:click=move |_| replay_open.set(true)
                    on:pointerenter=move |_| warm(preload_replay_dialog)
                >
                    "Replay…"
                </button>
            </Show>
            {replay_host}
            {move || {
                let rated_here = !session.read_only && item.with(Item::is_last_of_run);
                run_id.clone().filter(|_| rated_here).map(|run| view! { <RateAnswer item run /> })
            }}
            <Show when=can_continue>
                <button
                    type="button"
                    class="answer-action answer-continue"
                    title="Go on with this answer from where it stopped"
                    on:click=continue_answer
                >
                    "Continue"
                </button>
            </Show>
        </div>
    }
}

/// A reasoning span: a `<details>` open while it streams.
#[component]
pub fn Reasoning(item: Signal<Item>) -> impl IntoView {
    let streaming = Memo::new(move |_| item.with(Item::is_streaming));
    view! {
        <details class="reasoning" data-testid="reasoning" prop:open=move || streaming.get()>
            <summary>
                "Reasoning" {move || streaming.get().then_some(" …")}
            </summary>
            <div class="reasoning-text">{move || item.with(|item| item.text().to_string())}</div>
        </details>
    }
}

/// A failed run: its message and code.
#[component]
pub fn RunError(item: Signal<Item>) -> impl IntoView {
    let (message, code) = item.with_untracked(|item| match &item.body {
        ItemBody::RunError { message, code } => (message.clone(), code.clone()),
        _ => (String::new(), None),
    });
    view! {
        <div class="run-error" data-testid="run-error" role="alert">
            <strong>"The run failed: "</strong>
            <span>{message}</span>
            {code.map(|code| view! { <code class="error-code">{code}</code> })}
        </div>
    }
}

/// A run that was stopped before it completed (nothing once its answer was continued).
#[component]
pub fn RunCancelled(item: Signal<Item>) -> impl IntoView {
    let shown =
        move || item.with(|item| matches!(item.body, ItemBody::Cancelled { continued: false }));
    view! {
        <Show when=shown>
            <div class="run-cancelled" data-testid="run-cancelled">"Run stopped"</div>
        </Show>
    }
}

/// What a finished run's model calls used and cost: one quiet line under the run, with
/// the run's Timeline beside it.
#[component]
pub fn RunUsage(item: Signal<Item>) -> impl IntoView {
    let session = use_session();
    let run_id = item.with_untracked(|item| item.key.strip_prefix(USAGE_KEY).map(str::to_string));
    let timeline = run_id
        .filter(|id| session.run_timeline(id).is_some())
        .map(|run_id| view! { <RunTimeline run_id /> });
    // A stopped run's usage moves to the run that continued its answer.
    let line = move || {
        let totals = item.with(|item| match &item.body {
            ItemBody::Usage(totals) => *totals,
            _ => Default::default(),
        });
        (totals.calls > 0).then(|| {
            view! {
                <span class="run-usage-text" data-testid="run-usage" title=usage::details(&totals)>
                    {usage::summary(&totals)}
                </span>
            }
        })
    };
    view! {
        <div class="run-usage">
            {line}
            {timeline}
        </div>
    }
}

/// A notice in the transcript: a warning (an MCP server a call found down and when Tandem
/// tries it again, a model that fell back to another), or a plain note (the person changed
/// the conversation's instructions).
#[component]
pub fn RunNotice(item: Signal<Item>) -> impl IntoView {
    let (text, warning) = item.with_untracked(|item| match &item.body {
        ItemBody::Notice { text, warning } => (text.clone(), *warning),
        _ => (String::new(), false),
    });
    view! {
        <div class="run-notice" class:run-note=!warning data-testid="run-notice" role="status">
            {warning.then_some(view! { <span aria-hidden="true">"⚠ "</span> })}
            {text}
        </div>
    }
}
