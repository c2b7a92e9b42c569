//! The composer: a textarea for the person's message (Enter sends, Shift+Enter is a new
//! line), Send, and Stop while a run is active. When the server offers several models
//! (`GET /api/models`), a picker beside it chooses the session's model: a change travels
//! with the next message and holds for the session's later runs.
//!
//! It never takes the person's text away: it is never disabled, so what they type while
//! the agent works (or while the socket reconnects) waits in it, and a line under it says
//! why Send waits; a message the server refuses is put back. Each conversation keeps its
//! own draft. It takes the focus when a conversation opens, after the person sends, and
//! when a run ends or a question is answered, unless they are busy in another field (or
//! on a touch screen, where focusing would pop the keyboard up). With no session open it
//! starts a new conversation: the first message creates the session.

use std::collections::HashMap;

use leptos::prelude::*;
use shared::api::PostMessage;
use shared::ClientFrame;
use wasm_bindgen::JsCast;

use crate::api::ConnState;
use crate::state::route::navigate;
use crate::state::{use_models, use_session, RunState};

/// Error codes with which the server refuses a message; the draft is put back.
const REFUSALS: [&str; 5] = [
    "run_active",
    "awaiting_input",
    "invalid_message",
    "storage_unavailable",
    "rate_limited",
];

/// A fresh id for `clientMessageId`, so a resent message is taken once.
fn client_message_id() -> String {
    let random = (js_sys::Math::random() * 2f64.powi(52)) as u64;
    format!("web-{:x}-{random:013x}", js_sys::Date::now() as u64)
}

/// Whether the page is used with a touch screen or is phone-sized: no keyboard hints, and
/// no focusing that would pop the on-screen keyboard up.
fn touch_or_small() -> bool {
    window()
        .match_media("(pointer: coarse), (max-width: 640px)")
        .ok()
        .flatten()
        .is_some_and(|query| query.matches())
}

/// Focuses the composer unless the person is busy in another text field.
pub fn focus_composer() {
    if touch_or_small() {
        return;
    }
    let Some(document) = window().document() else {
        return;
    };
    let busy = document.active_element().is_some_and(|active| {
        let tag = active.tag_name().to_ascii_lowercase();
        let editing = matches!(tag.as_str(), "input" | "textarea" | "select")
            || active
                .dyn_ref::<web_sys::HtmlElement>()
                .is_some_and(|e| e.is_content_editable());
        editing && !active.class_list().contains("composer-input")
    });
    if busy {
        return;
    }
    if let Some(field) = document
        .query_selector(".composer-input")
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = field.focus();
    }
}

/// The message box under the transcript.
#[component]
pub fn Composer() -> impl IntoView {
    let session = use_session();
    let text = RwSignal::new(String::new());
    // Each conversation's unsent text, by session (`None`: the new conversation).
    let drafts = StoredValue::new(HashMap::<Option<String>, String>::new());
    // The last message sent, until its run starts: a refusal puts it back in the box.
    let sent = StoredValue::new(None::<String>);
    // A new conversation's first message is on its way.
    let starting = RwSignal::new(false);
    Effect::new(move |previous: Option<Option<String>>| {
        let id = session.id().get();
        if let Some(previous) = previous {
            let left = text.get_untracked();
            drafts.update_value(|d| {
                d.insert(previous, left);
            });
        }
        let kept = drafts.try_update_value(|d| d.remove(&id)).flatten();
        text.set(kept.unwrap_or_default());
        sent.set_value(None);
        request_animation_frame(focus_composer);
        id
    });
    Effect::new(move |previous: Option<RunState>| {
        let now = session.run().get();
        if now == RunState::Running {
            sent.set_value(None);
        }
        let ended = previous == Some(RunState::Running) && now == RunState::Idle;
        let answered = previous == Some(RunState::Awaiting) && now == RunState::Running;
        if ended || answered {
            request_animation_frame(focus_composer);
        }
        now
    });
    Effect::new(move |_| {
        let refused = session.notice().with(|n| {
            n.as_ref()
                .is_some_and(|e| REFUSALS.contains(&e.code.as_str()))
        });
        if let (true, Some(message)) = (refused, sent.get_value()) {
            if text.get_untracked().is_empty() {
                text.set(message);
            }
            sent.set_value(None);
        }
    });
    // Why a message cannot be sent right now (it waits in the box), if it cannot.
    let waits = move || {
        if session.id().with(Option::is_none) {
            return starting.get().then_some("Starting the conversation…");
        }
        match (session.connection().get(), session.run().get()) {
            (ConnState::Connecting, _) => Some("Sends once connected."),
            (ConnState::Reconnecting, _) => Some("Sends once the connection is back."),
            (_, RunState::Running) => {
                Some("Waits until the agent has finished — or press Stop to interrupt it.")
            }
            (_, RunState::Awaiting) if session.waiting_for_client().get() => {
                Some("Waits until the app that started this run returns its tools' results.")
            }
            (_, RunState::Awaiting) => Some("Waits until you answer the agent's question above."),
            (ConnState::Live, RunState::Idle) => None,
        }
    };
    let models = use_models().expect("the composer is on a signed-in page");
    // The model the picker shows: the person's pick, else the session's, else the default.
    let picked = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        session.id().track();
        picked.set(None);
    });
    let current = move || {
        let default = models.get().map(|list| list.default);
        session.model().get().or(default)
    };
    let shown = move || picked.get().or_else(current);
    let placeholder = if touch_or_small() {
        "Message the agent"
    } else {
        "Message the agent — Enter to send, Shift+Enter for a new line"
    };
    let send = move || {
        let message = text.get_untracked();
        if waits().is_some() || message.trim().is_empty() {
            return;
        }
        // Only a change is sent: the session keeps its model until it changes again.
        let model = picked
            .get_untracked()
            .filter(|m| Some(m) != current().as_ref());
        let client_message_id = Some(client_message_id());
        if session.id().with_untracked(Option::is_none) {
            let first = PostMessage {
                text: message,
                client_message_id,
                model,
                while_running: None,
            };
            starting.set(true);
            leptos::task::spawn_local(async move {
                if let Ok(id) = session.start(first).await {
                    text.set(String::new());
                    navigate(Some(&id));
                }
                starting.set(false);
            });
            return;
        }
        let frame = ClientFrame::UserMessage {
            text: message.clone(),
            client_message_id,
            model,
            while_running: None,
        };
        if session.send(frame) {
            sent.set_value(Some(message));
            text.set(String::new());
            session.show_latest();
        }
        focus_composer();
    };
    // An example prompt the person picked is sent as if typed.
    Effect::new(move |_| {
        if let Some(prompt) = session.take_picked_prompt() {
            text.set(prompt);
            send();
        }
    });
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            // Never a new line: Enter sends, or the text waits (the line below says why).
            ev.prevent_default();
            send();
        }
    };
    let hint = move || {
        let reason = waits()?;
        text.with(|t| !t.trim().is_empty()).then_some(reason)
    };
    view! {
        <div class="composer">
            <textarea
                class="composer-input"
                data-testid="composer"
                aria-label="Message"
                rows="2"
                placeholder=placeholder
                bind:value=text
                on:keydown=on_keydown
            ></textarea>
            <div class="composer-actions">
                {move || {
                    let list = models.get().filter(|list| list.models.len() > 1)?;
                    let options = list
                        .models
                        .into_iter()
                        .map(|model| {
                            let selected = Some(model.clone()) == shown();
                            view! { <option value=model.clone() selected=selected>{model.clone()}</option> }
                        })
                        .collect::<Vec<_>>();
                    Some(view! {
                        <select
                            class="model-picker"
                            data-testid="model-picker"
                            aria-label="Model"
                            on:change=move |ev| picked.set(Some(event_target_value(&ev)))
                        >
                            {options}
                        </select>
                    })
                }}
                <Show when=move || session.run().get() == RunState::Running>
                    <button
                        class="btn btn-stop"
                        data-testid="stop"
                        on:click=move |_| {
                            session.send(ClientFrame::Cancel);
                        }
                    >
                        "Stop"
                    </button>
                </Show>
                <button
                    class="btn btn-primary"
                    data-testid="send"
                    title=move || waits().unwrap_or("Send the message")
                    disabled=move || waits().is_some() || text.with(|t| t.trim().is_empty())
                    on:click=move |_| send()
                >
                    "Send"
                </button>
            </div>
        </div>
        {move || hint().map(|reason| view! {
            <p class="composer-hint" data-testid="composer-hint" role="status">{reason}</p>
        })}
    }
}
