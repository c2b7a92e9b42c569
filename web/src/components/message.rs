//! Transcript rows that are text: the person's messages, the agent's streamed answers,
//! reasoning spans, run errors, cancel markers, usage lines and notices.
//!
//! Each reads its one item signal, so a new token re-renders one text node.

use leptos::prelude::*;

use crate::markdown;
use crate::state::{usage, Item, ItemBody};

/// A message the person sent; above it, when the model's view begins here, a note saying
/// so and the summary of the earlier turns the model is sent instead, if one was made.
#[component]
pub fn UserMessage(item: Signal<Item>) -> impl IntoView {
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
            <div class="bubble bubble-user" data-testid="user-message">
                {move || item.with(|item| item.text().to_string())}
            </div>
        </div>
    }
}

/// The agent's answer as Markdown, re-rendered as it streams; shows a cursor meanwhile.
///
/// The HTML comes from [`markdown::to_html`], which escapes everything the model wrote, so
/// setting it as `innerHTML` cannot run or render anything from the model.
#[component]
pub fn AssistantMessage(item: Signal<Item>) -> impl IntoView {
    let streaming = Memo::new(move |_| item.with(Item::is_streaming));
    let html = Memo::new(move |_| item.with(|item| markdown::to_html(item.text())));
    view! {
        <div class="row row-assistant">
            <div
                class="bubble bubble-assistant markdown"
                class:streaming=move || streaming.get()
                data-testid="assistant-message"
                inner_html=move || html.get()
            ></div>
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

/// A run that was stopped before it completed.
#[component]
pub fn RunCancelled() -> impl IntoView {
    view! { <div class="run-cancelled" data-testid="run-cancelled">"Run stopped"</div> }
}

/// What a finished run's model calls used and cost: one quiet line under the run.
#[component]
pub fn RunUsage(item: Signal<Item>) -> impl IntoView {
    let totals = item.with_untracked(|item| match &item.body {
        ItemBody::Usage(totals) => *totals,
        _ => Default::default(),
    });
    view! {
        <div class="run-usage" data-testid="run-usage" title=usage::details(&totals)>
            {usage::summary(&totals)}
        </div>
    }
}

/// A notice in the run: an MCP server a call found down, and when Tandem tries it again.
#[component]
pub fn RunNotice(item: Signal<Item>) -> impl IntoView {
    let text = item.with_untracked(|item| match &item.body {
        ItemBody::Notice { text } => text.clone(),
        _ => String::new(),
    });
    view! {
        <div class="run-notice" data-testid="run-notice" role="status">
            <span aria-hidden="true">"⚠ "</span>
            {text}
        </div>
    }
}
