//! Thumbs up or down under a finished answer. Up is sent at once; down asks what was
//! wrong first (optional). The pressed thumb is the rating the log holds; a refusal says
//! why under the buttons. A share link's viewer sees no controls.

use leptos::prelude::*;
use leptos::task::spawn_local;
use shared::feedback::Rating;

use super::text_box::submit_keys;
use crate::state::keys::TextBox;
use crate::state::{feedback, use_session, Item};

/// The rating controls of the answer `item`, made by `run`.
#[component]
pub fn RateAnswer(item: Signal<Item>, run: String) -> impl IntoView {
    let session = use_session();
    let run = StoredValue::new(run);
    let rating = Memo::new(move |_| item.with(Item::rating));
    let asking = RwSignal::new(false);
    let comment = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let send = move |given: Rating, text: Option<String>| {
        busy.set(true);
        error.set(None);
        let run = run.get_value();
        spawn_local(async move {
            let sent = feedback::rate(session, run, given, text).await;
            busy.set(false);
            match sent {
                Ok(()) => {
                    asking.set(false);
                    comment.set(String::new());
                }
                Err(refused) => error.set(Some(refused.message)),
            }
        });
    };
    let up = move |_| send(Rating::Up, None);
    let down = move |_| asking.set(true);
    let send_comment = move || send(Rating::Down, Some(comment.get_untracked()));
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        send_comment();
    };
    let pressed = move |which: Rating| move || (rating.get() == Some(which)).to_string();
    view! {
        <span class="rate-answer" role="group" aria-label="Rate this answer">
            <button
                type="button"
                class="answer-action rate-button"
                aria-label="Good answer"
                aria-pressed=pressed(Rating::Up)
                title="A good answer"
                disabled=move || busy.get()
                on:click=up
            >
                <svg class="icon" viewBox="0 0 24 24" aria-hidden="true">
                    <path d="M7 10v11H3V10h4zm2 11h8.3a2 2 0 0 0 2-1.6l1.4-7A2 2 0 0 0 18.7 10H14V5.5A2.5 2.5 0 0 0 11.5 3L9 10v11z" />
                </svg>
            </button>
            <button
                type="button"
                class="answer-action rate-button"
                aria-label="Bad answer"
                aria-pressed=pressed(Rating::Down)
                title="A bad answer: say what was wrong"
                disabled=move || busy.get()
                on:click=down
            >
                <svg class="icon" viewBox="0 0 24 24" aria-hidden="true">
                    <path d="M17 14V3h4v11h-4zm-2-11H6.7a2 2 0 0 0-2 1.6l-1.4 7A2 2 0 0 0 5.3 14H10v4.5a2.5 2.5 0 0 0 2.5 2.5L15 14V3z" />
                </svg>
            </button>
        </span>
        <Show when=move || asking.get()>
            <form class="rate-comment" on:submit=submit>
                <textarea
                    class="input rate-comment-text"
                    aria-label="What was wrong with this answer? (optional)"
                    placeholder="What was wrong? (optional)"
                    maxlength="2000"
                    prop:value=move || comment.get()
                    on:input=move |ev| comment.set(event_target_value(&ev))
                    on:keydown=submit_keys(TextBox::Prose, send_comment)
                ></textarea>
                <div class="message-editor-actions">
                    <button type="button" class="btn btn-quiet" on:click=move |_| asking.set(false)>"Cancel"</button>
                    <button type="submit" class="btn" disabled=move || busy.get()>"Send feedback"</button>
                </div>
            </form>
        </Show>
        {move || error.get().map(|why| view! { <span class="rate-error" role="alert">{why}</span> })}
    }
}
