//! Where the focus goes when a dialog closes: back to the element that had it when the
//! dialog opened, or, when that element is gone (an entry of a menu that closed), to the
//! header's "More" button, so a keyboard user is never left at the top of the page.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::HtmlElement;

/// The element to give the focus back to. Cheap to copy.
#[derive(Clone, Copy)]
pub struct FocusReturn(StoredValue<Option<HtmlElement>, LocalStorage>);

impl FocusReturn {
    /// Remembers the element that has the focus now.
    pub fn capture() -> Self {
        let focused = document()
            .active_element()
            .and_then(|element| element.dyn_into::<HtmlElement>().ok());
        Self(StoredValue::new_local(focused))
    }

    /// Gives the focus back.
    pub fn restore(self) {
        let kept = self
            .0
            .try_get_value()
            .flatten()
            .filter(|element| element.is_connected());
        let target = kept.or_else(|| {
            document()
                .query_selector("[data-testid=more] > summary")
                .ok()
                .flatten()
                .and_then(|element| element.dyn_into::<HtmlElement>().ok())
        });
        if let Some(target) = target {
            let _ = target.focus();
        }
    }
}
