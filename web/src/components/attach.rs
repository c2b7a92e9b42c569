//! Files and images with messages: the attach button and the tray of files attached to the
//! message being written (name, size, upload progress, remove), and the files a sent
//! message carries in the transcript (images as thumbnails that open in the page's viewer,
//! other files as chips that download).

use leptos::prelude::*;
use shared::attachments::{human_size as size, Attachment, MAX_PER_MESSAGE};
use wasm_bindgen::JsCast;

use super::image_viewer::use_image_viewer;
use crate::state::attachments::{Pending, Tray, Upload};
use crate::state::use_session;

/// The raster types the page shows in place (what the server serves inline).
const SHOWN_INLINE: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The files of a `FileList` (an input's, a drop's, a paste's).
pub fn files_of(list: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    let Some(list) = list else {
        return Vec::new();
    };
    (0..list.length()).filter_map(|n| list.get(n)).collect()
}

/// The paperclip that opens the file picker; `picked` gets the files chosen.
#[component]
pub fn AttachButton(picked: impl Fn(Vec<web_sys::File>) + Copy + 'static) -> impl IntoView {
    let input = NodeRef::<leptos::html::Input>::new();
    view! {
        <input
            type="file"
            multiple=true
            hidden=true
            data-testid="attach-input"
            node_ref=input
            on:change=move |ev| {
                let target = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
                if let Some(target) = target {
                    picked(files_of(target.files()));
                    target.set_value("");
                }
            }
        />
        <button
            type="button"
            class="btn btn-quiet attach-button"
            data-testid="attach"
            aria-label="Attach files"
            title=format!("Attach files or images (up to {MAX_PER_MESSAGE}); you can also paste or drop them here")
            on:click=move |_| {
                if let Some(input) = input.get() {
                    input.click();
                }
            }
        >
            <svg class="icon" viewBox="0 0 24 24" aria-hidden="true">
                <path d="M16 6v9.5a4 4 0 0 1-8 0V5.5a2.5 2.5 0 0 1 5 0V15a1 1 0 0 1-2 0V6.5" />
            </svg>
        </button>
    }
}

/// The files attached to the message being written.
#[component]
pub fn AttachTray(tray: Tray) -> impl IntoView {
    view! {
        <Show when=move || !tray.is_empty()>
            <ul class="attach-tray" aria-label="Attached files" data-testid="attach-tray">
                <For
                    each=move || tray.files()
                    key=|pending| (pending.key, format!("{:?}", pending.upload))
                    children=move |pending: Pending| view! { <TrayChip pending tray /> }
                />
            </ul>
        </Show>
    }
}

#[component]
fn TrayChip(pending: Pending, tray: Tray) -> impl IntoView {
    let key = pending.key;
    let name = pending.name.clone();
    let (state, percent) = match &pending.upload {
        Upload::Waiting => ("Sent with the message".to_string(), None),
        Upload::Sending(percent) => (format!("Uploading… {percent}%"), Some(*percent)),
        Upload::Done(_) => (size(pending.bytes), None),
        Upload::Failed(why) => (why.clone(), None),
    };
    let failed = matches!(pending.upload, Upload::Failed(_));
    let thumbnail = match &pending.upload {
        Upload::Done(stored) if SHOWN_INLINE.contains(&stored.media_type.as_str()) => {
            Some(format!("/api/attachments/{}", stored.id))
        }
        _ => None,
    };
    view! {
        <li class="attach-chip" class:attach-failed=failed data-testid="attach-chip">
            {thumbnail.map(|src| view! { <img class="attach-chip-thumb" src=src alt="" /> })}
            <span class="attach-chip-text">
                <span class="attach-chip-name">{name.clone()}</span>
                <span class="attach-chip-state" role=if failed { "alert" } else { "status" }>{state}</span>
            </span>
            {percent.map(|value| view! {
                <progress class="attach-progress" max="100" value=value aria-label=format!("Uploading {name}")></progress>
            })}
            <button
                type="button"
                class="attach-remove"
                aria-label=format!("Remove {}", pending.name)
                on:click=move |_| tray.remove(key)
            >"×"</button>
        </li>
    }
}

/// The files a sent message carries.
#[component]
pub fn AttachedFiles(attachments: Vec<Attachment>) -> impl IntoView {
    let session = use_session();
    let viewer = use_image_viewer();
    let items = attachments
        .into_iter()
        .map(|attachment| {
            let url = session.attachment_url(&attachment.id);
            let label = format!("{} ({})", attachment.name, size(attachment.bytes));
            if SHOWN_INLINE.contains(&attachment.media_type.as_str()) {
                let src = url.clone();
                // A click opens the page's viewer; the link still opens the file on its own
                // (a middle click, "Open in new tab").
                let open = move |ev: leptos::ev::MouseEvent| {
                    let plain =
                        ev.button() == 0 && !(ev.ctrl_key() || ev.meta_key() || ev.shift_key());
                    let link = ev
                        .current_target()
                        .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
                    if let (true, Some(viewer), Some(link)) = (plain, viewer, link) {
                        ev.prevent_default();
                        viewer.open_at(&link);
                    }
                };
                view! {
                    <li>
                        <a class="attached-image" href=url target="_blank" rel="noopener"
                            data-name=attachment.name.clone()
                            title=format!("View {}", attachment.name)
                            on:click=open>
                            <img src=src alt=attachment.name.clone() loading="lazy" />
                        </a>
                    </li>
                }
                .into_any()
            } else {
                view! {
                    <li>
                        <a class="attached-file" href=url download=attachment.name.clone()
                            title=format!("Download {}", attachment.name)>
                            <svg class="icon" viewBox="0 0 24 24" aria-hidden="true">
                                <path d="M6 2.5h8l4 4v15H6z M14 2.5v4h4" />
                            </svg>
                            <span>{label}</span>
                        </a>
                    </li>
                }
                .into_any()
            }
        })
        .collect::<Vec<_>>();
    view! { <ul class="attached" aria-label="Attached files" data-testid="attached">{items}</ul> }
}
