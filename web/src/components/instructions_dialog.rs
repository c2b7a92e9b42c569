//! The instructions the model is given, set from the page: the person's own, for all
//! their conversations, and the open conversation's own (its settings), each saved on its
//! own. The model is told both with every message after the server's own prompt; a
//! conversation's change is a line in its transcript. Its code is fetched the first time
//! it opens ([`super::on_first_use`]).

use leptos::prelude::*;
use leptos::task::spawn_local;
use shared::instructions::MAX_CHARS;
use wasm_split_helpers::wasm_split;

use super::focus_return::FocusReturn;
use super::on_first_use::{on_first_use, Loaded};
use super::text_box::submit_keys;
use crate::api::rest;
use crate::state::keys::TextBox;
use crate::state::use_session;

/// The dialog while `open` is set (the "More" menu's "Instructions…" sets it).
#[component]
pub fn InstructionsDialogHost(open: RwSignal<bool>) -> impl IntoView {
    view! {
        <Show when=move || open.get()>
            {
                let back = FocusReturn::capture();
                move || on_first_use(instructions_dialog(open, back), move || open.set(false))
            }
        </Show>
    }
}

/// The dialog, from the module fetched the first time it opens.
#[wasm_split(instructions_dialog, fallible, preload(preload_instructions_dialog))]
pub(super) fn instructions_dialog(open: RwSignal<bool>, back: FocusReturn) -> Loaded {
    Ok(view! { <InstructionsDialog open back /> }.into_any())
}

#[component]
fn InstructionsDialog(open: RwSignal<bool>, back: FocusReturn) -> impl IntoView {
    let session = use_session();
    let close = move || {
        open.set(false);
        back.restore();
    };
    let conversation = Editor::new(Some(
        session
            .instructions()
            .with_untracked(|given| given.conversation.clone()),
    ));
    let own = Editor::new(None);
    spawn_local(async move {
        match rest::own_instructions().await {
            Ok(text) => own.loaded(text),
            Err(error) => own.error.set(Some(error.message)),
        }
    });
    let session_id = move || session.id().get();
    view! {
        <div class="dialog-backdrop" on:click=move |_| close()>
            <div
                class="dialog dialog-wide"
                role="dialog"
                aria-modal="true"
                aria-labelledby="instructions-title"
                data-testid="instructions-dialog"
                on:click=|ev| ev.stop_propagation()
                on:keydown=move |ev| if ev.key() == "Escape" { close() }
            >
                <h2 id="instructions-title">"Instructions"</h2>
                <p class="dialog-help">
                    "The model is told these with every message, after the server's own instructions. Share links do not show them unless made to."
                </p>
                <Show
                    when=move || session_id().is_some()
                    fallback=|| view! {
                        <p class="dialog-help">"A conversation gets instructions of its own once its first message has started it."</p>
                    }
                >
                    <Section
                        editor=conversation
                        title="For this conversation"
                        label="Instructions for this conversation"
                        test_id="conversation-instructions"
                        session=Signal::derive(session_id)
                    />
                </Show>
                <Section
                    editor=own
                    title="For all your conversations"
                    label="Your instructions for all your conversations"
                    test_id="own-instructions"
                    session=Signal::derive(|| None)
                />
                <button class="btn" on:click=move |_| close()>"Close"</button>
            </div>
        </div>
    }
}

/// One set of instructions being edited: its text, whether it is read yet, and how its
/// last save went. Cheap to copy.
#[derive(Clone, Copy)]
struct Editor {
    text: RwSignal<String>,
    /// The text as the server keeps it, once known.
    kept: RwSignal<Option<String>>,
    error: RwSignal<Option<String>>,
    busy: RwSignal<bool>,
}

impl Editor {
    fn new(known: Option<String>) -> Self {
        Self {
            text: RwSignal::new(known.clone().unwrap_or_default()),
            kept: RwSignal::new(known),
            error: RwSignal::new(None),
            busy: RwSignal::new(false),
        }
    }

    fn loaded(self, text: String) {
        self.text.set(text.clone());
        self.kept.set(Some(text));
    }
}

/// One section of the dialog: a heading, the box, how many characters are left, Save.
#[component]
fn Section(
    editor: Editor,
    title: &'static str,
    label: &'static str,
    test_id: &'static str,
    /// The session whose conversation's instructions these are; `None`: the person's own.
    session: Signal<Option<String>>,
) -> impl IntoView {
    let count = move || editor.text.with(|text| text.trim().chars().count());
    let too_long = move || count() > MAX_CHARS;
    let saved = move || {
        editor
            .kept
            .get()
            .is_some_and(|kept| editor.text.with(|t| *t == kept))
    };
    let save = move || {
        if too_long() || editor.busy.get_untracked() || editor.kept.with_untracked(Option::is_none)
        {
            return;
        }
        editor.busy.set(true);
        editor.error.set(None);
        let text = editor.text.get_untracked();
        let session = session.get_untracked();
        spawn_local(async move {
            match rest::set_instructions(session.as_deref(), &text).await {
                Ok(kept) => editor.loaded(kept),
                Err(error) => editor.error.set(Some(error.message)),
            }
            editor.busy.set(false);
        });
    };
    let heading = format!("{test_id}-title");
    let labelled_by = heading.clone();
    view! {
        <section class="instructions-section" aria-labelledby=labelled_by>
            <h3 class="dialog-subtitle" id=heading>{title}</h3>
            <textarea
                class="input instructions-text"
                aria-label=label
                data-testid=test_id
                rows="5"
                placeholder="For example: answer briefly, in British English; I am a nurse."
                prop:value=move || editor.text.get()
                disabled=move || editor.kept.with(Option::is_none)
                on:input=move |ev| editor.text.set(event_target_value(&ev))
                on:keydown=submit_keys(TextBox::Long, save)
            ></textarea>
            <div class="instructions-foot">
                <span class="instructions-count" class:over=too_long>
                    {move || format!("{} / {}", count(), MAX_CHARS)}
                </span>
                <span class="instructions-saved" role="status">
                    {move || (saved() && !editor.busy.get()).then_some("Saved")}
                </span>
                <button
                    class="btn btn-primary"
                    data-testid=format!("save-{test_id}")
                    disabled=move || too_long() || editor.busy.get() || saved()
                    on:click=move |_| save()
                >
                    "Save"
                </button>
            </div>
            {move || too_long().then(|| view! {
                <p class="form-error" role="alert">
                    {format!("At most {MAX_CHARS} characters: take out {}.", count() - MAX_CHARS)}
                </p>
            })}
            {move || editor.error.get().map(|why| view! { <p class="form-error" role="alert">{why}</p> })}
        </section>
    }
}
