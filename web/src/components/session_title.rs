//! The open session's title in the header, renamed in place: the pencil (or a double
//! click) turns it into a field; Enter or leaving the field saves, Escape cancels.

use leptos::html::Input;
use leptos::prelude::*;

use crate::state::{use_session, use_sessions};

/// The header's title of the open session.
#[component]
pub fn SessionTitle() -> impl IntoView {
    let session = use_session();
    let sessions = use_sessions();
    let editing = RwSignal::new(false);
    let draft = RwSignal::new(String::new());
    let field = NodeRef::<Input>::new();
    let title = move || {
        let id = session.id().get()?;
        // The list shows a conversation by its latest line; another line's title is in
        // the open conversation's lines.
        let title = sessions
            .sessions
            .with(|list| list.iter().find(|s| s.id == id).map(|s| s.title.clone()))
            .or_else(|| {
                session
                    .branches()
                    .with(|lines| lines.iter().find(|s| s.id == id).map(|s| s.title.clone()))
            });
        Some(
            title
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "New session".into()),
        )
    };
    let start = move || {
        draft.set(title().unwrap_or_default());
        editing.set(true);
    };
    // Focus the field once it is on screen, with its text selected.
    Effect::new(move |_| {
        if editing.get() {
            if let Some(input) = field.get() {
                let _ = input.focus();
                input.select();
            }
        }
    });
    // Also on blur, which fires as the page removes the focused field (a sign-out tears
    // the header down): then there is nothing left to save into.
    let save = move || {
        if editing.try_get_untracked() != Some(true) || draft.is_disposed() {
            return;
        }
        editing.set(false);
        let text = draft.get_untracked().trim().to_string();
        if let (Some(id), false) = (session.id().get_untracked(), text.is_empty()) {
            if Some(&text) != title().as_ref() {
                sessions.rename(id, text);
            }
        }
    };
    view! {
        <Show
            when=move || editing.get()
            fallback=move || view! {
                <h1 class="header-title" data-testid="session-title" on:dblclick=move |_| start()>
                    {move || title().unwrap_or_else(|| "Tandem".into())}
                </h1>
                <Show when=move || session.id().with(Option::is_some)>
                    <button
                        class="icon-button"
                        data-testid="rename"
                        aria-label="Rename session"
                        title="Rename session"
                        on:click=move |_| start()
                    >
                        "✎"
                    </button>
                </Show>
            }
        >
            <input
                class="input title-input"
                data-testid="title-input"
                aria-label="Session title"
                maxlength="200"
                node_ref=field
                prop:value=move || draft.get()
                on:input=move |ev| draft.set(event_target_value(&ev))
                on:keydown=move |ev| match ev.key().as_str() {
                    "Enter" => save(),
                    "Escape" => editing.set(false),
                    _ => {}
                }
                on:blur=move |_| save()
            />
        </Show>
    }
}
