//! The transcript: one keyed row per item, scrolled to the bottom as content streams in
//! unless the person scrolled up to read.

use leptos::html::Div;
use leptos::prelude::*;

use super::interrupt::InterruptCard;
use super::message::{
    AssistantMessage, Reasoning, RunCancelled, RunError, RunNotice, RunUsage, UserMessage,
};
use super::tool_call::ToolCallCard;
use crate::state::item::ItemKind;
use crate::state::session::Row;
use crate::state::{usage, use_session, Item, RunState};

/// How close to the bottom (in pixels) still counts as "at the bottom".
const STICK_DISTANCE_PX: i32 = 48;

/// The open session's transcript.
#[component]
pub fn Transcript() -> impl IntoView {
    let session = use_session();
    let scroller = NodeRef::<Div>::new();
    let stick = StoredValue::new(true);
    let on_scroll = move |_| {
        if let Some(el) = scroller.get_untracked() {
            let gap = el.scroll_height() - el.scroll_top() - el.client_height();
            stick.set_value(gap <= STICK_DISTANCE_PX);
        }
    };
    // Syncs the DOM scroll position with new content; runs after the DOM has updated.
    Effect::new(move |_| {
        session.tick.track();
        session.rows.track();
        if stick.get_value() {
            if let Some(el) = scroller.get_untracked() {
                el.set_scroll_top(el.scroll_height());
            }
        }
    });
    // A newly opened session starts at the bottom.
    Effect::new(move |_| {
        session.id.track();
        stick.set_value(true);
    });
    view! {
        <div
            class="transcript"
            data-testid="transcript"
            node_ref=scroller
            on:scroll=on_scroll
            on:click=super::copy_code::on_click
        >
            <div class="transcript-inner">
                <Show when=move || session.rows.with(Vec::is_empty)>
                    <p class="transcript-empty">"Say hello — the agent's answer will stream in here."</p>
                </Show>
                <For
                    each=move || session.rows.get()
                    key=|row: &Row| row.key.clone()
                    children=move |row: Row| view! { <TranscriptItem item=row.item.into() /> }
                />
                <Show when=move || session.run.get() == RunState::Running>
                    <div class="working" aria-live="polite">
                        <span class="working-dots"><i></i><i></i><i></i></span>
                        {move || match session.queued.get() {
                            Some(position) => view! {
                                <span data-testid="queued">
                                    {format!("Queued — the server is busy; this run starts when a slot frees up ({} in line)", ordinal(position))}
                                </span>
                            }.into_any(),
                            None => view! {
                                <span>"The agent is working"</span>
                                {move || session.run_usage.get().filter(|u| u.calls > 0).map(|u| view! {
                                    <span class="working-usage" data-testid="run-usage-live">
                                        {format!(" · {}", usage::summary(&u))}
                                    </span>
                                })}
                            }.into_any(),
                        }}
                    </div>
                </Show>
            </div>
        </div>
    }
}

/// One row, rendered by the kind of its item (which never changes for a key).
#[component]
fn TranscriptItem(item: Signal<Item>) -> impl IntoView {
    match item.with_untracked(Item::kind) {
        ItemKind::User => view! { <UserMessage item /> }.into_any(),
        ItemKind::Assistant => view! { <AssistantMessage item /> }.into_any(),
        ItemKind::Reasoning => view! { <Reasoning item /> }.into_any(),
        ItemKind::ToolCall => view! { <ToolCallCard item /> }.into_any(),
        ItemKind::Interrupt => view! { <InterruptCard item /> }.into_any(),
        ItemKind::RunError => view! { <RunError item /> }.into_any(),
        ItemKind::Cancelled => view! { <RunCancelled /> }.into_any(),
        ItemKind::Usage => view! { <RunUsage item /> }.into_any(),
        ItemKind::Notice => view! { <RunNotice item /> }.into_any(),
    }
}

/// `1st`, `2nd`, `3rd`, `4th`, … `11th`, `21st`.
fn ordinal(n: u64) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}
