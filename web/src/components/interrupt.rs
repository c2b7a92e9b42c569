//! The interrupt card: the agent's question (or request to run a tool) with the control its
//! kind needs and, when it has a deadline, a countdown; then a read-only record of the
//! answer once the transcript records it (from this tab or any other, or the server's
//! expiry). A refused answer to an already settled interrupt is said on the card, not the
//! page. The prompt is inline Markdown, rendered as safely as answers
//! ([`markdown::to_inline_html`]). A card that waits for the person is brought into view
//! when it appears, its controls (at its end) first. The tool-approval control lives in
//! [`super::approval`], the countdown in [`super::deadline`], the sending and locking in
//! [`super::responder`].
//!
//! The controls of a question that waits for the person are a split point
//! ([`super::on_first_use`]): their code is fetched the first time a question waits (and
//! as soon as a run starts, so a live question rarely waits for it), not by the page's
//! first load; a session whose questions are all answered never fetches it. The card's
//! head, prompt and recorded answer are drawn at once either way.

use leptos::html::Div;
use leptos::prelude::*;
use serde_json::json;
use shared::ResumeStatus;
use wasm_split_helpers::wasm_split;

use super::approval::ApprovalControl;
use super::budget::BudgetControl;
use super::deadline::Countdown;
use super::form::FormControl;
use super::on_first_use::{on_first_use, warm, Loaded};
use super::responder::Responder;
use super::text_box::submit_keys;
use crate::markdown;
use crate::state::answer::{Answer, AnswerOutcome};
use crate::state::interrupt::{confirm_payload, Control};
use crate::state::item::InterruptCard as Card;
use crate::state::keys::TextBox;
use crate::state::refusal::Refusal;
use crate::state::{use_session, Item, ItemBody};

fn card_of(item: &Item) -> Option<&Card> {
    match &item.body {
        ItemBody::Interrupt(card) => Some(card),
        _ => None,
    }
}

/// A question for the person; `data-state` is pending until its answer is recorded.
#[component]
pub fn InterruptCard(item: Signal<Item>) -> impl IntoView {
    let session = use_session();
    let card = item.with_untracked(|item| card_of(item).cloned());
    let Some(card) = card else {
        return ().into_any();
    };
    let answer = Memo::new(move |_| item.with(|item| card_of(item).and_then(|c| c.answer.clone())));
    let responder = Responder::new(
        session,
        card.interrupt.id.clone(),
        card.interrupt.expires_at.as_deref(),
    );
    let prompt = card
        .interrupt
        .message
        .as_deref()
        .map(markdown::to_inline_html)
        .unwrap_or_else(|| "The agent needs your input.".into());
    let node = NodeRef::<Div>::new();
    if !session.read_only && card.answer.is_none() {
        bring_into_view(node, answer);
    }
    let (badge, from) = match card.control {
        Control::ToolApproval { .. } => ("Approval", "The agent wants to run a tool"),
        Control::Budget { .. } => ("Budget", "The run reached your budget"),
        _ => ("Question", "The agent asks"),
    };
    let control = StoredValue::new(card.control.clone());
    view! {
        <div
            class="interrupt"
            node_ref=node
            class:answered=move || answer.with(Option::is_some)
            data-testid="interrupt"
            data-kind=card.control.kind_name()
            data-state=move || if answer.with(Option::is_some) { "answered" } else { "pending" }
            data-outcome=move || answer.with(|answer| answer.as_ref().map(|a| a.outcome.as_str()))
        >
            <div class="interrupt-head">
                <span class="interrupt-badge">{badge}</span>
                <span class="interrupt-from">{from}</span>
            </div>
            <p class="interrupt-prompt" data-testid="interrupt-prompt" inner_html=prompt></p>
            {move || match answer.get() {
                Some(answer) => answered(answer).into_any(),
                None if session.read_only => view! {
                    <p class="interrupt-waiting" data-testid="interrupt-waiting">
                        "Waiting for the session's owner to answer."
                    </p>
                }.into_any(),
                // Nothing to close if the module cannot come: the notice says to reload.
                None => on_first_use(controls(control.get_value(), responder, node), || {})
                    .into_any(),
            }}
            {move || responder.refusal.get().map(refusal_note)}
        </div>
    }
    .into_any()
}

/// Starts fetching the question controls' module (a run started: it may ask).
pub fn warm_controls() {
    warm(preload_controls);
}

/// The controls of a question waiting for the person, from the module fetched the first
/// time one waits. They arrive after the card was laid out, so its end (the buttons) is
/// brought into view again once they are.
#[wasm_split(interrupt_controls, fallible, preload(preload_controls))]
fn controls(control: Control, responder: Responder, card: NodeRef<Div>) -> Loaded {
    Effect::new(move |_| {
        if let Some(card) = card.get_untracked() {
            show_end_after_layout(card);
        }
    });
    Ok(pending(control, responder))
}

/// Scrolls a card that waits for the person into view once it is laid out, its end (the
/// buttons) aligned with the transcript's bottom edge so Approve and Reject are on screen:
/// when the card appears (live, or in a session opened with it waiting), and again when
/// the window is resized (a phone turned, a window narrowed) until it is answered.
fn bring_into_view(node: NodeRef<Div>, answer: Memo<Option<Answer>>) {
    node.on_load(show_end_after_layout);
    let resized = window_event_listener(leptos::ev::resize, move |_| {
        if answer.try_with_untracked(Option::is_none).unwrap_or(false) {
            if let Some(card) = node.get_untracked() {
                card.scroll_into_view_with_bool(false);
            }
        }
    });
    on_cleanup(move || resized.remove());
}

/// Brings the card's end into view after this frame's layout (the transcript's own
/// scrolling included).
fn show_end_after_layout(card: web_sys::HtmlDivElement) {
    request_animation_frame(move || card.scroll_into_view_with_bool(false));
}

/// Why the server would not take this card's answer: said on the card, calmly, not as the
/// page's error notice.
fn refusal_note(refusal: Refusal) -> impl IntoView {
    view! {
        <p
            class="interrupt-refusal"
            data-testid="interrupt-refusal"
            data-refusal=refusal.as_str()
            role="status"
        >
            {refusal.message()}
        </p>
    }
}

fn answered(answer: Answer) -> impl IntoView {
    // A verdict (`Approved`, `Rejected: …`, `Declined`) reads on its own, and an expired
    // record says so itself. A rejection is a warning, a skipped or expired question
    // neutral: only an answer or an approval is shown as a success.
    let rejected = answer.rejected;
    let neutral = !rejected && answer.outcome != AnswerOutcome::Resolved;
    let text = if answer.verdict {
        answer.summary
    } else {
        format!("Answered: {}", answer.summary)
    };
    view! {
        <p
            class="interrupt-answer"
            class:rejected=rejected
            class:neutral=neutral
            data-testid="interrupt-answer"
        >
            {text}
        </p>
    }
}

fn pending(control: Control, responder: Responder) -> AnyView {
    let body = match control {
        Control::ToolApproval {
            tool_name,
            arguments,
        } => {
            // Reject is the way to say no here, so there is no separate Skip link.
            return view! {
                <div class="interrupt-body">
                    <Countdown responder />
                    <ApprovalControl tool_name arguments responder />
                </div>
            }
            .into_any();
        }
        Control::Budget { may_overrun } => {
            // Stop here is the way to say no, as Reject is for a tool call.
            return view! {
                <div class="interrupt-body">
                    <BudgetControl may_overrun responder />
                </div>
            }
            .into_any();
        }
        Control::Text => view! { <TextControl responder /> }.into_any(),
        Control::Choice(choices) => view! { <ChoiceControl choices responder /> }.into_any(),
        Control::Confirm => view! { <ConfirmControl responder /> }.into_any(),
        Control::Form(fields) => view! { <FormControl fields responder /> }.into_any(),
    };
    view! {
        <div class="interrupt-body">
            <Countdown responder />
            {body}
            <button
                class="link-button"
                data-testid="interrupt-decline"
                disabled=move || responder.locked()
                on:click=move |_| responder.answer(ResumeStatus::Cancelled, None)
            >
                "Skip this question"
            </button>
        </div>
    }
    .into_any()
}

#[component]
fn TextControl(responder: Responder) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let blank = move || text.with(|text| text.trim().is_empty());
    let submit = move || {
        if !blank() {
            responder.resolve(json!({ "text": text.get_untracked().trim() }));
        }
    };
    view! {
        <div class="answer-row">
            <input
                type="text"
                class="input"
                data-testid="interrupt-text"
                placeholder="Type your answer…"
                bind:value=text
                disabled=move || responder.locked()
                on:keydown=submit_keys(TextBox::Prose, submit)
            />
            <button
                class="btn btn-primary"
                data-testid="interrupt-submit"
                disabled=move || responder.locked() || blank()
                on:click=move |_| submit()
            >
                "Submit"
            </button>
        </div>
    }
}

#[component]
fn ChoiceControl(choices: Vec<String>, responder: Responder) -> impl IntoView {
    let buttons = choices
        .into_iter()
        .map(|choice| {
            let label = choice.clone();
            view! {
                <button
                    class="btn btn-choice"
                    data-testid="interrupt-choice"
                    disabled=move || responder.locked()
                    on:click=move |_| responder.resolve(json!({ "choice": choice }))
                >
                    {label}
                </button>
            }
        })
        .collect_view();
    view! { <div class="choices">{buttons}</div> }
}

#[component]
fn ConfirmControl(responder: Responder) -> impl IntoView {
    let comment = RwSignal::new(String::new());
    let decide = move |approved: bool| {
        responder.resolve(confirm_payload(approved, &comment.get_untracked()));
    };
    view! {
        <input
            type="text"
            class="input"
            data-testid="interrupt-comment"
            placeholder="Comment (optional)"
            bind:value=comment
            disabled=move || responder.locked()
        />
        <div class="choices">
            <button
                class="btn btn-approve"
                data-testid="interrupt-approve"
                disabled=move || responder.locked()
                on:click=move |_| decide(true)
            >
                "Approve"
            </button>
            <button
                class="btn btn-reject"
                data-testid="interrupt-reject"
                disabled=move || responder.locked()
                on:click=move |_| decide(false)
            >
                "Reject"
            </button>
        </div>
    }
}
