//! Transcript rows that are text: the person's messages, the agent's streamed answers,
//! reasoning spans, run errors and cancel markers.
//!
//! Each reads its one item signal, so a new token re-renders one text node.

use leptos::prelude::*;

use crate::state::{Item, ItemBody};

/// A message the person sent.
#[component]
pub fn UserMessage(item: Signal<Item>) -> impl IntoView {
    view! {
        <div class="row row-user">
            <div class="bubble bubble-user" data-testid="user-message">
                {move || item.with(|item| item.text().to_string())}
            </div>
        </div>
    }
}

/// The agent's answer; shows a cursor while it streams.
#[component]
pub fn AssistantMessage(item: Signal<Item>) -> impl IntoView {
    let streaming = Memo::new(move |_| item.with(Item::is_streaming));
    view! {
        <div class="row row-assistant">
            <div
                class="bubble bubble-assistant"
                class:streaming=move || streaming.get()
                data-testid="assistant-message"
            >
                {move || item.with(|item| item.text().to_string())}
            </div>
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
