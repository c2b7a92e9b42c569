//! The transcript: one keyed row per item. It opens at the newest row and follows the
//! stream while the person is at the bottom; once they scroll up to read it stays where
//! they are and offers "Jump to latest" with a count of the rows that arrived since. When
//! the person sends, it brings the newest row into view again. An empty conversation shows
//! example prompts; a session whose history cannot be read says so and offers to retry.

use leptos::html::Div;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

use super::branch_switcher::BranchSwitcher;
use super::interrupt::InterruptCard;
use super::message::{
    AssistantMessage, Reasoning, RunCancelled, RunError, RunNotice, RunUsage, UserMessage,
};
use super::tool_call::ToolCallCard;
use crate::first_paint;
use crate::state::item::ItemKind;
use crate::state::session::Row;
use crate::state::{usage, use_session, History, Item, RunState};

/// How close to the bottom (in pixels) still counts as "at the bottom".
const STICK_DISTANCE_PX: i32 = 48;

/// Prompts a new conversation offers, each showing off something Tandem does (the demo
/// model acts on these; a real model answers them too).
const EXAMPLES: [(&str, &str); 4] = [
    (
        "Plan a trip somewhere warm",
        "asks you to choose, then for approval",
    ),
    (
        "Sign me up for the newsletter",
        "asks you to fill in a form",
    ),
    ("Delete my old files", "waits for your approval"),
    ("What is 12 * (3 + 4)?", "calls a tool and shows its work"),
];

/// The open session's transcript.
#[component]
pub fn Transcript() -> impl IntoView {
    let session = use_session();
    let scroller = NodeRef::<Div>::new();
    let inner = NodeRef::<Div>::new();
    // Whether the view follows the newest row; rows that arrived while it did not.
    let follow = RwSignal::new(true);
    let unseen = RwSignal::new(0usize);
    let seen_rows = StoredValue::new(0usize);
    let to_bottom = move || {
        if let Some(el) = scroller.get_untracked() {
            el.set_scroll_top(el.scroll_height());
        }
    };
    let on_scroll = move |_| {
        if let Some(el) = scroller.get_untracked() {
            let gap = el.scroll_height() - el.scroll_top() - el.client_height();
            let at_bottom = gap <= STICK_DISTANCE_PX;
            if at_bottom != follow.get_untracked() {
                follow.set(at_bottom);
            }
            if at_bottom {
                unseen.set(0);
            }
        }
    };
    let jump = move || {
        follow.set(true);
        unseen.set(0);
        to_bottom();
    };
    // New rows: followed to the bottom, or counted while the person reads further up.
    Effect::new(move |_| {
        session.tick().track();
        let rows = session.rows().with(Vec::len);
        let added = rows.saturating_sub(seen_rows.get_value());
        seen_rows.set_value(rows);
        if follow.get_untracked() {
            to_bottom();
        } else if added > 0 {
            unseen.update(|n| *n += added);
        }
    });
    // Content that grows after it is drawn (Markdown, code, a card opening) keeps the
    // bottom in view while the view follows.
    let observer = StoredValue::new_local(None::<(web_sys::ResizeObserver, Closure<dyn FnMut()>)>);
    Effect::new(move |_| {
        let Some(target) = inner.get() else { return };
        let resized = Closure::<dyn FnMut()>::new(move || {
            if follow.try_get_untracked().unwrap_or(false) {
                to_bottom();
            }
        });
        if let Ok(watcher) = web_sys::ResizeObserver::new(resized.as_ref().unchecked_ref()) {
            watcher.observe(&target);
            observer.set_value(Some((watcher, resized)));
        }
    });
    on_cleanup(move || {
        observer.try_with_value(|watching| {
            if let Some((watcher, _)) = watching {
                watcher.disconnect();
            }
        });
    });
    // A newly opened session starts at the bottom, and so does the newest row after the
    // person sends.
    Effect::new(move |_| {
        session.id().track();
        session.latest().track();
        seen_rows.set_value(session.rows().with_untracked(Vec::len));
        jump();
    });
    // The transcript the server rendered for the first paint stays over the page until
    // this one has rows to show, cannot read the history, or shows another session.
    // A memo, so new rows after the first do not run the check again.
    let route = crate::state::route::use_route();
    let drawn = Memo::new(move |_| {
        !session.rows().with(Vec::is_empty) || session.history().get() == History::Unavailable
    });
    Effect::new(move |_| {
        let drawn = drawn.get();
        route.with(|open| first_paint::settle(open.session(), drawn));
    });
    let empty =
        move || session.rows().with(Vec::is_empty) && session.history().get() == History::Loaded;
    // Where the open line parts from its conversation's others: the switcher shows there.
    let part = Memo::new(move |_| session.part_key());
    view! {
        <div class="transcript-frame">
            <div
                class="transcript"
                data-testid="transcript"
                node_ref=scroller
                on:scroll=on_scroll
                on:click=super::copy_code::on_click
            >
                <div class="transcript-inner" node_ref=inner>
                    <Show when=move || session.history().get() == History::Unavailable>
                        <Unavailable />
                    </Show>
                    <Show when=empty>
                        <Examples />
                    </Show>
                    <For
                        each=move || session.rows().get()
                        key=|row: &Row| row.key.clone()
                        children=move |row: Row| {
                            let key = row.key.clone();
                            let parts_here = move || part.get().as_deref() == Some(key.as_str());
                            view! {
                                <Show when=parts_here>
                                    <BranchSwitcher />
                                </Show>
                                <TranscriptItem item=row.item.into() />
                            }
                        }
                    />
                    <Show when=move || session.run().get() == RunState::Running>
                        <Working />
                    </Show>
                    <super::queued_messages::QueuedMessages />
                </div>
            </div>
            <Show when=move || !follow.get()>
                <button class="jump-latest" data-testid="jump-latest" on:click=move |_| jump()>
                    {move || match unseen.get() {
                        0 => "↓ Jump to latest".to_string(),
                        1 => "↓ Jump to latest · 1 new".to_string(),
                        n => format!("↓ Jump to latest · {n} new"),
                    }}
                </button>
            </Show>
        </div>
    }
}

/// The line under the newest row while a run works (or waits for a slot).
#[component]
fn Working() -> impl IntoView {
    let session = use_session();
    view! {
        <div class="working" aria-live="polite">
            <span class="working-dots"><i></i><i></i><i></i></span>
            {move || match session.queued().get() {
                Some(position) => view! {
                    <span data-testid="queued">
                        {format!("Queued — the server is busy; this run starts when a slot frees up ({} in line)", ordinal(position))}
                    </span>
                }.into_any(),
                None => view! {
                    <span>"The agent is working"</span>
                    {move || session.run_usage().get().filter(|u| u.calls > 0).map(|u| view! {
                        <span class="working-usage" data-testid="run-usage-live">
                            {format!(" · {}", usage::summary(&u))}
                        </span>
                    })}
                }.into_any(),
            }}
        </div>
    }
}

/// An empty conversation: what to say, and prompts to start with.
#[component]
fn Examples() -> impl IntoView {
    let session = use_session();
    view! {
        <div class="empty-state" data-testid="empty-state">
            <h2 class="empty-title">"What shall we work on?"</h2>
            <p class="empty-text">
                "Ask anything. When the agent needs you — a choice, an approval, a form — it asks right here."
            </p>
            <ul class="examples" aria-label="Example prompts">
                {EXAMPLES
                    .iter()
                    .map(|(prompt, shows)| view! {
                        <li>
                            <button
                                class="example"
                                data-testid="example-prompt"
                                on:click=move |_| session.pick_prompt(prompt.to_string())
                            >
                                <span class="example-prompt">{*prompt}</span>
                                <span class="example-shows">{*shows}</span>
                            </button>
                        </li>
                    })
                    .collect_view()}
            </ul>
        </div>
    }
}

/// A session whose history could not be read (the server is not answering).
#[component]
fn Unavailable() -> impl IntoView {
    let session = use_session();
    view! {
        <div class="unavailable" data-testid="unavailable" role="alert">
            <p>"This session can't be loaded right now: the server isn't answering. It loads by itself once the server is back."</p>
            <button class="btn" on:click=move |_| session.reopen()>"Try again"</button>
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
        ItemKind::Cancelled => view! { <RunCancelled item /> }.into_any(),
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
