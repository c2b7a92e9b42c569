//! The composer: a textarea for the person's message (Enter sends, Shift+Enter is a new
//! line), Send, and Stop while a run is active. When the server offers several models
//! (`GET /api/models`), a picker beside it chooses the session's model: a change travels
//! with the next message and holds for the session's later runs.
//!
//! While the agent works (or a question waits) it stays usable: Enter queues the message
//! (it runs when the agent has finished, `whileRunning: queue`), Ctrl+Enter (or "Send
//! now" in the menu beside Send) stops the agent and runs it first (`interrupt`), and
//! "Steer" has the agent read it at its next step (`steer`). The up arrow in an empty
//! composer edits the person's last message.
//!
//! It never takes the person's text away: it is never disabled, so what they type while
//! the socket reconnects waits in it, and a line under it says why Send waits; a message
//! the server refuses is put back. Each conversation keeps its own draft. It takes the focus when a conversation opens, after the person sends, and
//! when a run ends or a question is answered, unless they are busy in another field (or
//! on a touch screen, where focusing would pop the keyboard up). With no session open it
//! starts a new conversation: the first message creates the session.

use std::collections::HashMap;

use leptos::prelude::*;
use shared::api::PostMessage;
use shared::queue::WhileRunning;
use shared::ClientFrame;
use wasm_bindgen::JsCast;

use super::attach::{files_of, AttachButton, AttachTray};
use crate::api::{client_message_id, ConnState};
use crate::state::attachments::{Pending, Tray};
use crate::state::route::navigate;
use crate::state::{use_models, use_session, RunState};

/// Error codes with which the server refuses a message; the draft is put back.
const REFUSALS: [&str; 6] = [
    "run_active",
    "awaiting_input",
    "invalid_message",
    "storage_unavailable",
    "rate_limited",
    "queue_full",
];

/// Whether the page is used with a touch screen or is phone-sized: no keyboard hints, and
/// no focusing that would pop the on-screen keyboard up.
fn touch_or_small() -> bool {
    window()
        .match_media("(pointer: coarse), (max-width: 640px)")
        .ok()
        .flatten()
        .is_some_and(|query| query.matches())
}

/// Focuses the composer unless the person is busy elsewhere: in another text field, or in
/// a menu or a dialog they opened (a run that ends as they open the header's menu must not
/// take the focus from it, which would close it).
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
        let opened = active
            .closest("details[open], dialog[open], [role=dialog]")
            .ok()
            .flatten()
            .is_some();
        (editing && !active.class_list().contains("composer-input")) || opened
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

/// Opens the editor of the person's last message, as its Edit button does (there is one
/// only when it can be edited), and gives the editor the focus; false if there is none.
fn edit_last_message() -> bool {
    let Some(document) = window().document() else {
        return false;
    };
    let last = document
        .query_selector_all(".message-edit")
        .ok()
        .and_then(|all| all.item(all.length().checked_sub(1)?))
        .and_then(|node| node.dyn_into::<web_sys::HtmlElement>().ok());
    let Some(edit) = last else {
        return false;
    };
    edit.click();
    request_animation_frame(|| {
        let field = window()
            .document()
            .and_then(|d| d.query_selector(".message-editor-text").ok().flatten())
            .and_then(|e| e.dyn_into::<web_sys::HtmlTextAreaElement>().ok());
        if let Some(field) = field {
            let _ = field.focus();
            let end = field.value().len() as u32;
            let _ = field.set_selection_range(end, end);
        }
    });
    true
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
    // The session a new conversation's first message just created: when it opens, what
    // the box holds (typed since that message) and the model picked stay.
    let carried = StoredValue::new(None::<String>);
    // Whether `id`, just opened, is that session; any other forgets it.
    let carried_over = move |id: Option<&String>| {
        let kept = id.is_some() && carried.with_value(|carried| carried.as_ref() == id);
        if !kept {
            carried.set_value(None);
        }
        kept
    };
    // The files attached to the message, and those of the last one sent until its run
    // starts (a refusal puts them back with its text).
    let tray = Tray::default();
    let sent_files = StoredValue::new_local(Vec::<Pending>::new());
    let attach_note = RwSignal::new(None::<&'static str>);
    Effect::new(move |previous: Option<Option<String>>| {
        let id = session.id().get();
        // A new conversation that became a session keeps what was typed since its first
        // message; its files went with that message.
        if !carried_over(id.as_ref()) {
            if let Some(previous) = previous {
                let left = text.get_untracked();
                drafts.update_value(|d| {
                    d.insert(previous, left);
                });
            }
            let kept = drafts.try_update_value(|d| d.remove(&id)).flatten();
            text.set(kept.unwrap_or_default());
        }
        sent.set_value(None);
        tray.clear();
        sent_files.set_value(Vec::new());
        attach_note.set(None);
        request_animation_frame(focus_composer);
        id
    });
    Effect::new(move |previous: Option<RunState>| {
        let now = session.run().get();
        if now == RunState::Running {
            sent.set_value(None);
            sent_files.set_value(Vec::new());
            if previous != Some(RunState::Running) {
                // The run may ask: have a question's controls ready by then.
                super::interrupt::warm_controls();
            }
        }
        let ended = previous == Some(RunState::Running) && now == RunState::Idle;
        let answered = previous == Some(RunState::Awaiting) && now == RunState::Running;
        if ended || answered {
            request_animation_frame(focus_composer);
        }
        now
    });
    // A queued message reached the queue: it is no longer the box's to put back.
    Effect::new(move |_| {
        session.queued_messages().track();
        sent.set_value(None);
        sent_files.set_value(Vec::new());
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
            tray.put_back(
                sent_files
                    .try_update_value(std::mem::take)
                    .unwrap_or_default(),
            );
        }
    });
    // Why a message cannot be sent right now (it waits in the box), if it cannot.
    let waits = move || {
        if tray.uploading() {
            return Some("Sends once the files are uploaded.");
        }
        if session.id().with(Option::is_none) {
            return starting.get().then_some("Starting the conversation…");
        }
        match session.connection().get() {
            ConnState::Connecting => Some("Sends once connected."),
            ConnState::Reconnecting => Some("Sends once the connection is back."),
            ConnState::Live => None,
        }
    };
    // A message needs words or a file.
    let sendable = move || text.with(|t| !t.trim().is_empty()) || !tray.ids().is_empty();
    let attach = move |files: Vec<web_sys::File>| {
        if files.is_empty() {
            return;
        }
        let all = tray.add(files, session.id().get_untracked());
        attach_note
            .set((!all).then_some("A message carries at most 10 files; the rest were left out."));
    };
    let on_paste = move |ev: leptos::ev::ClipboardEvent| {
        let files = files_of(ev.clipboard_data().and_then(|data| data.files()));
        if !files.is_empty() {
            ev.prevent_default();
            attach(files);
        }
    };
    let dragging = RwSignal::new(false);
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        attach(files_of(ev.data_transfer().and_then(|data| data.files())));
    };
    // Whether a message now waits for the agent instead of starting a run.
    let busy = move || session.run().get() != RunState::Idle;
    // What the line under the box says of a message that would wait, if one would.
    let waiting_hint = move || {
        if !busy() || text.with(|t| t.trim().is_empty()) {
            return None;
        }
        let keys = !touch_or_small();
        Some(match session.run().get() {
            RunState::Awaiting if session.waiting_for_client().get() => {
                "Queued until the app that started this run returns its tools' results."
            }
            RunState::Awaiting if keys => {
                "Enter queues it until you answer the question above; Ctrl+Enter drops the question and sends it now."
            }
            RunState::Awaiting => "Queued until you answer the question above.",
            _ if keys => {
                "Enter queues it: it is sent when the agent has finished. Ctrl+Enter stops the agent and sends it now."
            }
            _ => "Queued: it is sent when the agent has finished. ▾ for more.",
        })
    };
    let menu_open = RwSignal::new(false);
    let models = use_models().expect("the composer is on a signed-in page");
    // The model the picker shows: the person's pick, else the session's, else the default.
    let picked = RwSignal::new(None::<String>);
    // Another conversation shows its own model, but a new conversation that became a
    // session keeps the model picked for it.
    Effect::new(move |_| {
        let id = session.id().get();
        if !carried_over(id.as_ref()) {
            picked.set(None);
        }
    });
    let current = move || {
        let default = models.get().map(|list| list.default);
        session.model().get().or(default)
    };
    let shown = move || picked.get().or_else(current);
    // What the line under the box says of the files, if anything.
    let files_hint = move || {
        if let Some(note) = attach_note.get() {
            return Some(note);
        }
        let model = shown()?;
        let blind = models.get()?.without_images.contains(&model);
        (blind && tray.has_visual()).then_some(
            "This model does not take images or PDFs: it is only told they are attached.",
        )
    };
    let placeholder = move || match (touch_or_small(), busy()) {
        (true, _) => "Message the agent",
        (false, false) => "Message the agent — Enter to send, Shift+Enter for a new line",
        (false, true) => "Message the agent — Enter queues it for when the agent has finished",
    };
    let send = move |mode: WhileRunning| {
        menu_open.set(false);
        let message = text.get_untracked();
        if waits().is_some() || !sendable() {
            return;
        }
        attach_note.set(None);
        // Only a change is sent: the session keeps its model until it changes again.
        let model = picked
            .get_untracked()
            .filter(|m| Some(m) != current().as_ref());
        let client_message_id = Some(client_message_id());
        if session.id().with_untracked(Option::is_none) {
            let first = PostMessage {
                text: message.clone(),
                client_message_id,
                model,
                while_running: None,
                attachments: Vec::new(),
            };
            starting.set(true);
            // The box empties at once: what is typed from now on is the next message.
            text.set(String::new());
            leptos::task::spawn_local(async move {
                match session.start(first, tray).await {
                    Ok(id) => {
                        carried.set_value(Some(id.clone()));
                        navigate(Some(&id));
                    }
                    // Refused: the message goes back in the box, before what was typed
                    // since.
                    Err(_) => text.update(|typed| {
                        *typed = if typed.is_empty() {
                            message
                        } else {
                            format!("{message}\n{typed}")
                        }
                    }),
                }
                starting.set(false);
            });
            return;
        }
        let frame = ClientFrame::UserMessage {
            text: message.clone(),
            client_message_id,
            model,
            while_running: Some(mode),
            attachments: tray.ids(),
        };
        if session.send(frame) {
            sent.set_value(Some(message));
            sent_files.set_value(tray.take());
            text.set(String::new());
            session.show_latest();
        }
        focus_composer();
    };
    // An example prompt the person picked is sent as if typed.
    Effect::new(move |_| {
        if let Some(prompt) = session.take_picked_prompt() {
            text.set(prompt);
            send(WhileRunning::Queue);
        }
    });
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        match ev.key().as_str() {
            "Enter" if !ev.shift_key() && !ev.is_composing() => {
                // Never a new line: Enter sends (or queues), or the text waits (the line
                // below says why); Ctrl+Enter sends now, stopping the agent.
                ev.prevent_default();
                let now = (ev.ctrl_key() || ev.meta_key()) && busy();
                send(if now {
                    WhileRunning::Interrupt
                } else {
                    WhileRunning::Queue
                });
            }
            "ArrowUp" if text.with(|t| t.is_empty()) && !busy() && edit_last_message() => {
                ev.prevent_default();
            }
            "Escape" if menu_open.get_untracked() => menu_open.set(false),
            _ => {}
        }
    };
    let hint = move || {
        let reason = waits().or_else(waiting_hint);
        let reason = reason.filter(|_| sendable() || tray.uploading());
        reason.or_else(files_hint)
    };
    // An opened menu takes the focus on its first item, so the keyboard goes on there.
    Effect::new(move |_| {
        if menu_open.get() {
            request_animation_frame(|| {
                let first = window()
                    .document()
                    .and_then(|d| d.query_selector(".send-menu-item").ok().flatten())
                    .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
                if let Some(first) = first {
                    let _ = first.focus();
                }
            });
        }
    });
    let menu_keys = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Escape" {
            menu_open.set(false);
            focus_composer();
        }
    };
    view! {
        <div
            class="composer"
            class:composer-dropping=move || dragging.get()
            on:dragover=move |ev: leptos::ev::DragEvent| {
                ev.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |_| dragging.set(false)
            on:drop=on_drop
        >
            <AttachTray tray />
            <textarea
                class="composer-input"
                data-testid="composer"
                aria-label="Message"
                rows="2"
                placeholder=placeholder
                bind:value=text
                on:keydown=on_keydown
                on:paste=on_paste
            ></textarea>
            <div class="composer-actions">
                <AttachButton picked=attach />
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
                            session.send(ClientFrame::Cancel {});
                        }
                    >
                        "Stop"
                    </button>
                </Show>
                <div class="send-group" on:keydown=menu_keys>
                    <button
                        class="btn btn-primary"
                        class:send-split=busy
                        data-testid="send"
                        title=move || waits().unwrap_or(if busy() { "Queue the message: it is sent when the agent has finished" } else { "Send the message" })
                        disabled=move || waits().is_some() || !sendable()
                        on:click=move |_| send(WhileRunning::Queue)
                    >
                        {move || if busy() { "Queue" } else { "Send" }}
                    </button>
                    <Show when=busy>
                        <button
                            class="btn btn-primary send-more"
                            data-testid="send-more"
                            aria-label="More ways to send"
                            aria-haspopup="menu"
                            aria-expanded=move || menu_open.get().to_string()
                            disabled=move || waits().is_some() || !sendable()
                            on:click=move |_| menu_open.update(|open| *open = !*open)
                        >
                            "▾"
                        </button>
                        <Show when=move || menu_open.get()>
                            <div class="send-menu" role="menu" aria-label="Send while the agent works">
                                <button
                                    type="button"
                                    role="menuitem"
                                    class="send-menu-item"
                                    on:click=move |_| send(WhileRunning::Interrupt)
                                >
                                    <strong>"Send now"</strong>
                                    <span>"Stops the agent (its answer so far is kept), then sends this"</span>
                                </button>
                                <button
                                    type="button"
                                    role="menuitem"
                                    class="send-menu-item"
                                    on:click=move |_| send(WhileRunning::Steer)
                                >
                                    <strong>"Steer"</strong>
                                    <span>"The agent reads it at its next step, without stopping"</span>
                                </button>
                            </div>
                        </Show>
                    </Show>
                </div>
            </div>
        </div>
        {move || hint().map(|reason| view! {
            <p class="composer-hint" data-testid="composer-hint" role="status">{reason}</p>
        })}
    }
}
