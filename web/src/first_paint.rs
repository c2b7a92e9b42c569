//! The transcript `index.html`'s loader paints while the page's code loads: the server's
//! rendering of the opened session (`GET /api/sessions/{id}/preview`), as a layer over the
//! page in the page's own layout. [`take_over`] takes it away once the page has drawn its
//! own transcript (or has something else to show), and tells the loader not to paint a
//! preview that arrives later.

use wasm_bindgen::JsValue;

/// Where the loader puts the layer (its element id).
const LAYER_ID: &str = "first-paint";
/// The flag the loader reads before painting (`window.tandemDrawn`).
const DRAWN_FLAG: &str = "tandemDrawn";

/// Takes the layer away once the page's transcript is `drawn`, or at once when the page
/// shows another session than the layer (`open`: the session the URL opens).
pub fn settle(open: Option<&str>, drawn: bool) {
    let elsewhere = layer_session().is_some_and(|shown| Some(shown.as_str()) != open);
    if drawn || elsewhere {
        take_over();
    }
}

/// The session the layer shows (its `data-session`), if there is a layer.
fn layer_session() -> Option<String> {
    web_sys::window()?
        .document()?
        .get_element_by_id(LAYER_ID)?
        .get_attribute("data-session")
}

/// Removes the server-rendered layer, if any, and keeps the loader from painting one.
pub fn take_over() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let _ = js_sys::Reflect::set(&window, &JsValue::from_str(DRAWN_FLAG), &JsValue::TRUE);
    if let Some(layer) = window
        .document()
        .and_then(|document| document.get_element_by_id(LAYER_ID))
    {
        layer.remove();
    }
}
