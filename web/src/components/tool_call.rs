//! A tool call card: the tool's name, its arguments as they stream, how far it got while
//! it works (when its tool reports progress), its status and result.
//! A call that waits for the person's approval says so and leaves its arguments to the
//! approval card below, which shows them to edit; a share link that hides arguments sends
//! none (and of the result only how the call ended), and the card says so instead of
//! showing empty boxes. A `run_python` call shows its program highlighted and its output
//! (`python_run.rs`).

use leptos::prelude::*;

use super::attach::AttachedFiles;
use super::python_run::{program_of, PythonCode, PythonOutput, PythonResult, PYTHON_TOOL};
use crate::state::item::{pretty_json, ToolCall, ToolStatus};
use crate::state::{use_session, Item, ItemBody};

fn call_of(item: &Item) -> Option<&ToolCall> {
    match &item.body {
        ItemBody::ToolCall(call) => Some(call),
        _ => None,
    }
}

/// One tool call; `data-status` is running, awaiting (approval), done, rejected or error.
#[component]
pub fn ToolCallCard(item: Signal<Item>) -> impl IntoView {
    let read_only = use_session().read_only;
    let name =
        item.with_untracked(|item| call_of(item).map(|c| c.name.clone()).unwrap_or_default());
    let tool_name = name.clone();
    let args_label = format!("Arguments of {name}");
    let result_label = format!("Result of {name}");
    let status = Memo::new(move |_| {
        item.with(|item| call_of(item).map_or(ToolStatus::Running, ToolCall::status))
    });
    let args = move || {
        item.with(|item| {
            call_of(item)
                .map(|c| pretty_json(&c.args))
                .unwrap_or_default()
        })
    };
    // The arguments, unless the approval card below shows them to edit, or there are
    // none to show (a share link that hides them sends none).
    let shown_args = move || {
        let asking = status.get() == ToolStatus::Awaiting && !read_only;
        Some(args()).filter(|args| !asking && !args.is_empty())
    };
    // A share link that hides tool arguments hides what results say, too.
    let hidden_result = move || {
        read_only
            && item.with(|item| {
                call_of(item)
                    .and_then(|c| c.result.as_deref())
                    .is_some_and(crate::state::answer::is_hidden_result)
            })
    };
    let result = Memo::new(move |_| {
        item.with(|item| call_of(item).and_then(|c| c.result.as_deref().map(pretty_json)))
    });
    // A Python call shows its program highlighted and what it printed, once the
    // arguments and the result parse; until then, as any call.
    let python = name == PYTHON_TOOL;
    let code = Memo::new(move |_| {
        python
            .then(|| item.with(|item| call_of(item).and_then(|c| program_of(&c.args))))
            .flatten()
    });
    let output = Memo::new(move |_| {
        python
            .then(|| {
                item.with(|item| {
                    call_of(item).and_then(|c| c.result.as_deref().and_then(PythonOutput::of))
                })
            })
            .flatten()
    });
    let files = move || {
        item.with(|item| {
            call_of(item)
                .map(|c| c.attachments.clone())
                .filter(|files| !files.is_empty())
        })
    };
    let progress = Memo::new(move |_| item.with(|item| call_of(item).and_then(ToolCall::progress)));
    let progress_label = format!("Progress of {name}");
    // A share link's viewer is not the one asked.
    let status_label = move || match status.get() {
        ToolStatus::Awaiting if read_only => "waiting for approval",
        status => status.label(),
    };
    view! {
        <div
            class="tool-call"
            data-testid="tool-call"
            data-tool-name=tool_name
            data-status=move || status.get().as_str()
        >
            <div class="tool-head">
                <span class="tool-icon" aria-hidden="true">"⚙"</span>
                <span class="tool-name">{name}</span>
                <span class=move || format!("pill pill-{}", status.get().as_str())>{status_label}</span>
            </div>
            {move || progress.get().map(|(percent, label)| view! {
                <div class="tool-progress" data-testid="tool-progress">
                    <progress max="100" value=percent aria-label=progress_label.clone()></progress>
                    <span class="tool-progress-label">{label}</span>
                </div>
            })}
            // Long arguments and results scroll in their box; a keyboard reaches them too.
            {move || shown_args().map(|args| match code.get() {
                Some(code) => view! { <PythonCode code /> }.into_any(),
                None => view! {
                    <div class="tool-label">"Arguments"</div>
                    <pre class="tool-pre" data-testid="tool-args" tabindex="0" aria-label=args_label.clone()>{args}</pre>
                }.into_any(),
            })}
            {move || hidden_result().then(|| view! {
                <p class="tool-hidden" data-testid="tool-result-hidden">
                    "This link does not show what the call returned."
                </p>
            })}
            {move || result.get().filter(|result| !result.is_empty() && !hidden_result()).map(|result| match output.get() {
                Some(output) => view! { <PythonResult output /> }.into_any(),
                None => view! {
                    <div class="tool-label">"Result"</div>
                    <pre class="tool-pre" data-testid="tool-result" tabindex="0" aria-label=result_label.clone()>{result}</pre>
                }.into_any(),
            })}
            {move || files().map(|attachments| view! { <AttachedFiles attachments /> })}
        </div>
    }
}
