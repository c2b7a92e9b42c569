//! The person's messages waiting for their turn, under the newest answer: each says what
//! it waits for (queued: it runs when the agent has finished; steering: the agent reads
//! it at its next step), with Edit (in place: Save / Cancel) and Withdraw. The list is
//! the server's (its sockets' `queue` frames); a share link's viewer sees none.

use leptos::prelude::*;
use shared::queue::QueuedMessage;

use super::attach::AttachedFiles;
use super::text_box::submit_keys;
use crate::state::keys::TextBox;
use crate::state::{use_session, RunState};

/// The queued messages of the open session, if any wait.
#[component]
pub fn QueuedMessages() -> impl IntoView {
    let session = use_session();
    let any = move || !session.read_only && session.queued_messages().with(|q| !q.is_empty());
    view! {
        <Show when=any>
            <section
                class="queued-messages"
                data-testid="queued-messages"
                aria-label="Your messages waiting to be sent"
            >
                <For
                    each=move || session.queued_messages().get()
                    key=|queued: &QueuedMessage| (queued.id.clone(), queued.text.clone())
                    children=move |queued: QueuedMessage| view! { <QueuedRow queued /> }
                />
            </section>
        </Show>
    }
}

/// One waiting message.
#[component]
fn QueuedRow(queued: QueuedMessage) -> impl IntoView {
    let session = use_session();
    let editing = RwSignal::new(false);
    let draft = RwSignal::new(queued.text.clone());
    let field = NodeRef::<leptos::html::Textarea>::new();
    let id = StoredValue::new(queued.id.clone());
    let text = queued.text.clone();
    // The files it carries: shown with it (a message of files alone has no text).
    let files = queued.attachments.clone();
    let steer = queued.steer;
    let what = move || match (steer, session.run().get()) {
        (true, _) => "Steering · the agent reads it at its next step",
        (false, RunState::Awaiting) => "Queued · sent once the question above is answered",
        (false, _) => "Queued · sent when the agent has finished",
    };
    let save = move || {
        let new = draft.get_untracked();
        if new.trim().is_empty() {
            return;
        }
        editing.set(false);
        session.edit_queued(id.get_value(), new);
    };
    let save_on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        save();
    };
    let enter = submit_keys(TextBox::Prose, save);
    let keys = move |ev: leptos::ev::KeyboardEvent| match ev.key().as_str() {
        "Escape" => editing.set(false),
        _ => enter(ev),
    };
    let open = move |_| {
        editing.set(true);
        request_animation_frame(move || {
            if let Some(Some(field)) = field.try_get_untracked() {
                let _ = field.focus();
            }
        });
    };
    let withdraw = move |_| session.withdraw_queued(id.get_value());
    view! {
        <div class="queued-message" data-testid="queued-message">
            <span class="queued-what">{what}</span>
            <Show
                when=move || editing.get()
                fallback={
                    let text = text.clone();
                    move || {
                        let files = (!files.is_empty()).then(|| files.clone());
                        view! {
                            <div class="bubble bubble-queued">
                                {text.clone()}
                                {files.map(|attachments| view! { <AttachedFiles attachments /> })}
                            </div>
                        }
                    }
                }
            >
                <form class="message-editor" on:submit=save_on_submit>
                    <textarea
                        class="input message-editor-text"
                        aria-label="Edit your queued message"
                        prop:value=move || draft.get()
                        on:input=move |ev| draft.set(event_target_value(&ev))
                        on:keydown=keys
                        node_ref=field
                    ></textarea>
                    <div class="message-editor-actions">
                        <button type="button" class="btn btn-quiet" on:click=move |_| editing.set(false)>"Cancel"</button>
                        <button type="submit" class="btn" disabled=move || draft.with(|d| d.trim().is_empty())>"Save"</button>
                    </div>
                </form>
            </Show>
            <Show when=move || !editing.get()>
                <div class="answer-actions">
                    <button
                        type="button"
                        class="answer-action"
                        aria-label="Edit this queued message"
                        on:click=open
                    >"Edit"</button>
                    <button
                        type="button"
                        class="answer-action"
                        aria-label="Withdraw this queued message"
                        title="It will not be sent"
                        on:click=withdraw
                    >"Withdraw"</button>
                </div>
            </Show>
        </div>
    }
}
