//! Talking to the Tandem server: REST calls ([`rest`]), the per-session WebSocket
//! ([`socket`]) and the live session list ([`list_stream`]); failures are [`ApiError`]s,
//! which mirror the server's JSON error.
//!
//! It owns the wire and nothing about how the page shows what comes over it.

pub mod error;
pub mod list_stream;
pub mod rest;
pub mod socket;
pub mod upload;

pub use error::ApiError;
pub use socket::{ConnState, SessionSocket};

/// A fresh id for `clientMessageId`, so a request sent again is taken once.
pub fn client_message_id() -> String {
    let random = (js_sys::Math::random() * 2f64.powi(52)) as u64;
    format!("web-{:x}-{random:013x}", js_sys::Date::now() as u64)
}

/// A reply's JSON text read as `T`, through a [`serde_json::Value`]: every wire type is then
/// read by one copy of its derived code (the `Value` one, which the types read by hand use
/// too) rather than a second copy for text, which the page's WASM would carry for each.
pub fn from_text<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    serde_json::from_value(serde_json::from_str(text)?)
}

/// Waits `ms` on the page's timers (a dialog that reads something again while it runs).
pub async fn pause(ms: u32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            let delay = i32::try_from(ms).unwrap_or(i32::MAX);
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, delay);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}
