//! The composer: a textarea that sends the person's message over the session socket
//! (Enter sends, Shift+Enter is a newline), and a Stop button while a run is active.
//! It is disabled, with the reason in its placeholder, whenever a message would be refused;
//! if the server refuses one anyway, the text is put back. When the server offers several
//! models (`GET /api/models`), a picker beside it chooses the session's model: a change
//! travels with the next message and holds for the session's later runs.

use leptos::prelude::*;
use shared::ClientFrame;

use crate::api::ConnState;
use crate::state::{use_session, RunState};

/// Error codes with which the server refuses a message; the draft is put back.
const REFUSALS: [&str; 4] = [
    "run_active",
    "awaiting_input",
    "invalid_message",
    "storage_unavailable",
];

/// A fresh id for `clientMessageId`, so a resent message is taken once.
fn client_message_id() -> String {
    let random = (js_sys::Math::random() * 2f64.powi(52)) as u64;
    format!("web-{:x}-{random:013x}", js_sys::Date::now() as u64)
}

/// The message box under the transcript.
#[component]
pub fn Composer() -> impl IntoView {
    let session = use_session();
    let text = RwSignal::new(String::new());
    // The last message sent, until its run starts: a refusal puts it back in the box.
    let draft = StoredValue::new(None::<String>);
    Effect::new(move |_| {
        if session.run.get() == RunState::Running {
            draft.set_value(None);
        }
    });
    Effect::new(move |_| {
        let refused = session.notice.with(|n| {
            n.as_ref()
                .is_some_and(|e| REFUSALS.contains(&e.code.as_str()))
        });
        if let (true, Some(message)) = (refused, draft.get_value()) {
            if text.get_untracked().is_empty() {
                text.set(message);
            }
            draft.set_value(None);
        }
    });
    let blocked = move || match (session.connection.get(), session.run.get()) {
        (ConnState::Connecting, _) => Some("Connecting…"),
        (ConnState::Reconnecting, _) => Some("Reconnecting to the server…"),
        (_, RunState::Running) => Some("The agent is working — press Stop to interrupt it."),
        (_, RunState::Awaiting) if session.waiting_for_client.get() => {
            Some("Waiting for the app that started this run to return its tools' results.")
        }
        (_, RunState::Awaiting) => Some("Answer the agent's question above to continue."),
        (ConnState::Live, RunState::Idle) => None,
    };
    let models = LocalResource::new(|| async { crate::api::rest::models().await.ok() });
    // The model the picker shows: the person's pick, else the session's, else the default.
    let picked = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        session.id.track();
        picked.set(None);
    });
    let current = move || {
        let default = models.get().flatten().map(|list| list.default);
        session.model.get().or(default)
    };
    let shown = move || picked.get().or_else(current);
    let placeholder = move || {
        blocked().unwrap_or("Message the agent — Enter to send, Shift+Enter for a new line")
    };
    let send = move || {
        let message = text.get_untracked();
        if blocked().is_some() || message.trim().is_empty() {
            return;
        }
        // Only a change is sent: the session keeps its model until it changes again.
        let model = picked
            .get_untracked()
            .filter(|m| Some(m) != current().as_ref());
        let frame = ClientFrame::UserMessage {
            text: message.clone(),
            client_message_id: Some(client_message_id()),
            model,
        };
        if session.send(frame) {
            draft.set_value(Some(message));
            text.set(String::new());
        }
    };
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            ev.prevent_default();
            send();
        }
    };
    view! {
        <div class="composer">
            <textarea
                class="composer-input"
                data-testid="composer"
                rows="2"
                placeholder=placeholder
                disabled=move || blocked().is_some()
                bind:value=text
                on:keydown=on_keydown
            ></textarea>
            <div class="composer-actions">
                {move || {
                    let list = models.get().flatten().filter(|list| list.models.len() > 1)?;
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
                <Show when=move || session.run.get() == RunState::Running>
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
                    disabled=move || blocked().is_some() || text.with(|t| t.trim().is_empty())
                    on:click=move |_| send()
                >
                    "Send"
                </button>
            </div>
        </div>
    }
}
