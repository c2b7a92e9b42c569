//! The tool-approval control of an interrupt card: the tool the agent wants to call, its
//! arguments as editable JSON, an optional reason, and Approve / Reject. It builds the
//! payload with [`approval_payload`] (edited arguments only when they really changed) and
//! shows, under the buttons, why an answer could not be sent or why the server refused it.
//! It sends only through the card's [`Responder`].

use leptos::prelude::*;
use serde_json::Value;

use super::responder::Responder;
use super::text_box::submit_keys;
use crate::state::approval::approval_payload;
use crate::state::keys::TextBox;

/// The fewest rows the arguments box opens with.
const MIN_ROWS: usize = 3;
/// The most rows the arguments box opens with (longer arguments scroll).
const MAX_ROWS: usize = 16;

/// Approve (with the arguments as edited) or reject one tool call.
#[component]
pub fn ApprovalControl(tool_name: String, arguments: Value, responder: Responder) -> impl IntoView {
    let start = serde_json::to_string_pretty(&arguments).unwrap_or_default();
    let rows = start.lines().count().clamp(MIN_ROWS, MAX_ROWS);
    let original = StoredValue::new(arguments);
    let text = RwSignal::new(start);
    let reason = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let decide = move |approved: bool| {
        let payload = original.with_value(|original| {
            approval_payload(
                approved,
                &reason.get_untracked(),
                original,
                &text.get_untracked(),
            )
        });
        match payload {
            Ok(payload) => {
                error.set(None);
                responder.resolve(payload);
            }
            Err(message) => error.set(Some(message)),
        }
    };
    let disabled = move || responder.locked();
    // A local problem (unreadable JSON) first, else the server's refusal of the last answer.
    let shown_error = move || error.get().or_else(|| responder.refused.get());
    view! {
        <p class="approval-tool">
            <span class="field-label">"Tool "</span>
            <code class="tool-name" data-testid="approval-tool">{tool_name}</code>
        </p>
        <label class="field approval-field">
            <span class="field-label">"Arguments (JSON — edit before approving if needed)"</span>
            <textarea
                class="input approval-arguments"
                data-testid="approval-arguments"
                rows=rows
                spellcheck="false"
                bind:value=text
                disabled=disabled
                on:keydown=submit_keys(TextBox::Long, move || decide(true))
            ></textarea>
        </label>
        <input
            type="text"
            class="input"
            data-testid="approval-reason"
            placeholder="Reason (optional)"
            bind:value=reason
            disabled=disabled
        />
        {move || shown_error().map(|message| view! {
            <p class="form-error" data-testid="approval-error" role="alert">{message}</p>
        })}
        <div class="choices">
            <button
                class="btn btn-approve"
                data-testid="interrupt-approve"
                disabled=disabled
                on:click=move |_| decide(true)
            >
                "Approve"
            </button>
            <button
                class="btn btn-reject"
                data-testid="interrupt-reject"
                disabled=disabled
                on:click=move |_| decide(false)
            >
                "Reject"
            </button>
        </div>
    }
}
