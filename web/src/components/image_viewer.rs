//! The images of the open session in a viewer over the page, as a click on one opens it:
//! the image fitted to the screen (a click on it, or + and −, zooms), the previous and next
//! image of the session (the arrow keys too), its name and place ("2 of 5"), Download, and
//! Close (Escape, or a click beside it), which gives the focus back to the thumbnail.
//! Its code is fetched the first time it opens ([`super::on_first_use`]).

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_split_helpers::wasm_split;

use super::focus_return::FocusReturn;
use super::on_first_use::{on_first_use, Loaded};

/// One image the viewer shows: where it is read, and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub url: String,
    pub name: String,
}

/// The viewer's state, shared through context. Cheap to copy.
#[derive(Clone, Copy)]
pub struct ImageViewer {
    /// The images of the session in transcript order, and the one shown; `None`: closed.
    open: RwSignal<Option<(Vec<Shown>, usize)>>,
}

/// Puts a closed viewer in context and returns it.
pub fn provide_image_viewer() -> ImageViewer {
    let viewer = ImageViewer {
        open: RwSignal::new(None),
    };
    provide_context(viewer);
    viewer
}

/// The viewer from context, if the page has one.
pub fn use_image_viewer() -> Option<ImageViewer> {
    use_context::<ImageViewer>()
}

impl ImageViewer {
    /// Opens the viewer on the thumbnail `link` (an `a.attached-image`): the session's
    /// images are those of the transcript, in order.
    pub fn open_at(self, link: &web_sys::Element) {
        let all = document()
            .query_selector_all("[data-testid=transcript] a.attached-image")
            .ok();
        let mut images = Vec::new();
        let mut at = 0;
        for index in 0..all.as_ref().map_or(0, web_sys::NodeList::length) {
            let Some(node) = all.as_ref().and_then(|all| all.item(index)) else {
                continue;
            };
            let Ok(element) = node.dyn_into::<web_sys::Element>() else {
                continue;
            };
            if element == *link {
                at = images.len();
            }
            images.push(Shown {
                url: element.get_attribute("href").unwrap_or_default(),
                name: element.get_attribute("data-name").unwrap_or_default(),
            });
        }
        if !images.is_empty() {
            self.open.set(Some((images, at)));
        }
    }
}

/// The viewer while it is open.
#[component]
pub fn ImageViewerHost(viewer: ImageViewer) -> impl IntoView {
    view! {
        <Show when=move || viewer.open.with(Option::is_some)>
            {
                let back = FocusReturn::capture();
                move || on_first_use(image_viewer(viewer, back), move || viewer.open.set(None))
            }
        </Show>
    }
}

/// The viewer, from the module fetched the first time it opens.
#[wasm_split(image_viewer, fallible)]
fn image_viewer(viewer: ImageViewer, back: FocusReturn) -> Loaded {
    Ok(view! { <ViewerDialog viewer back /> }.into_any())
}

/// The zoom steps past fitting the screen: the image's own size, then larger.
const ZOOMS: [f64; 4] = [1.0, 1.5, 2.0, 3.0];

#[component]
fn ViewerDialog(viewer: ImageViewer, back: FocusReturn) -> impl IntoView {
    // `None`: fitted to the screen; else the step of [`ZOOMS`].
    let zoom = RwSignal::new(None::<usize>);
    let natural = RwSignal::new(0.0_f64);
    let close = move || {
        viewer.open.set(None);
        back.restore();
    };
    let count = move || {
        viewer
            .open
            .with(|open| open.as_ref().map_or(0, |(all, _)| all.len()))
    };
    let current = move || {
        viewer
            .open
            .with(|open| open.as_ref().and_then(|(all, at)| all.get(*at).cloned()))
    };
    let place = move || {
        viewer
            .open
            .with(|open| open.as_ref().map_or(0, |(_, at)| *at))
    };
    let step = move |by: isize| {
        viewer.open.update(|open| {
            if let Some((all, at)) = open {
                let len = all.len() as isize;
                *at = ((*at as isize + by).rem_euclid(len)) as usize;
            }
        });
        zoom.set(None);
    };
    let zoom_in = move || zoom.update(|z| *z = Some(z.map_or(0, |z| (z + 1).min(ZOOMS.len() - 1))));
    let zoom_out = move || zoom.update(|z| *z = z.and_then(|z| z.checked_sub(1)));
    let keys = move |ev: leptos::ev::KeyboardEvent| {
        let handled = match ev.key().as_str() {
            "Escape" => {
                close();
                true
            }
            "ArrowRight" => {
                step(1);
                true
            }
            "ArrowLeft" => {
                step(-1);
                true
            }
            "+" | "=" => {
                zoom_in();
                true
            }
            "-" => {
                zoom_out();
                true
            }
            _ => false,
        };
        if handled {
            ev.prevent_default();
            ev.stop_propagation();
        }
    };
    let close_button = NodeRef::<leptos::html::Button>::new();
    Effect::new(move |_| {
        if let Some(button) = close_button.get() {
            let _ = button.focus();
        }
    });
    let width = move || {
        zoom.get()
            .filter(|_| natural.get() > 0.0)
            .map(|step| format!("{}px", (natural.get() * ZOOMS[step]).round() as u32))
    };
    let name = move || current().map(|shown| shown.name).unwrap_or_default();
    view! {
        <div class="dialog-backdrop viewer-backdrop" on:click=move |_| close()>
            <div
                class="viewer"
                role="dialog"
                aria-modal="true"
                aria-label=move || format!("Image: {}", name())
                data-testid="image-viewer"
                on:click=|ev| ev.stop_propagation()
                on:keydown=keys
            >
                <div class="viewer-bar">
                    <span class="viewer-name" title=name>{name}</span>
                    <span class="viewer-place" data-testid="viewer-place">
                        {move || format!("{} of {}", place() + 1, count())}
                    </span>
                    <button type="button" class="btn btn-quiet" aria-label="Zoom out"
                        disabled=move || zoom.get().is_none() on:click=move |_| zoom_out()>"−"</button>
                    <button type="button" class="btn btn-quiet" aria-label="Zoom in"
                        disabled=move || zoom.get() == Some(ZOOMS.len() - 1) on:click=move |_| zoom_in()>"+"</button>
                    <a class="btn btn-quiet" href=move || current().map(|s| s.url).unwrap_or_default()
                        download=name>"Download"</a>
                    <button type="button" class="btn" node_ref=close_button on:click=move |_| close()>"Close"</button>
                </div>
                <div class="viewer-stage" class:viewer-zoomed=move || zoom.get().is_some()>
                    <img
                        src=move || current().map(|s| s.url).unwrap_or_default()
                        alt=name
                        style:width=width
                        title=move || if zoom.get().is_some() { "Click to fit the screen" } else { "Click to zoom" }
                        on:load=move |ev| {
                            let size = ev
                                .target()
                                .and_then(|t| t.dyn_into::<web_sys::HtmlImageElement>().ok())
                                .map_or(0.0, |img| f64::from(img.natural_width()));
                            natural.set(size);
                        }
                        on:click=move |_| zoom.update(|z| *z = if z.is_some() { None } else { Some(0) })
                    />
                </div>
                <Show when=move || { count() > 1 }>
                    <div class="viewer-steps">
                        <button type="button" class="btn" aria-label="Previous image" on:click=move |_| step(-1)>"‹ Previous"</button>
                        <button type="button" class="btn" aria-label="Next image" on:click=move |_| step(1)>"Next ›"</button>
                    </div>
                </Show>
            </div>
        </div>
    }
}
