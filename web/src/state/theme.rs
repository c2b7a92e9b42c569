//! The colour theme the person picked: light, dark, or the system's (the default). The
//! choice is remembered in `localStorage` and shown as `data-theme` on `<html>`, which the
//! stylesheet's dark blocks read; "system" removes the attribute so
//! `prefers-color-scheme` decides. A line of script in `web/index.html` applies the stored
//! choice before the first paint, so this only keeps it in step afterwards. It owns no
//! colours: those are the stylesheet's custom properties.

use wasm_bindgen::prelude::*;

/// Where the choice is remembered (read by the inline script in `web/index.html` too).
pub const STORAGE_KEY: &str = "tandem.theme";

/// A colour theme the person can pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Theme {
    /// Follow the system's `prefers-color-scheme`.
    #[default]
    System,
    Light,
    Dark,
}

impl Theme {
    /// Every choice, in the order the picker lists them.
    pub const ALL: [Theme; 3] = [Theme::System, Theme::Light, Theme::Dark];

    /// The stored or attribute value; `system` for the default.
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::System => "system",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    /// A stored value; anything unknown (or nothing) is the system's theme.
    pub fn parse(value: Option<&str>) -> Theme {
        match value {
            Some("light") => Theme::Light,
            Some("dark") => Theme::Dark,
            _ => Theme::System,
        }
    }

    /// What the picker shows.
    pub fn label(self) -> &'static str {
        match self {
            Theme::System => "◐ System",
            Theme::Light => "☀ Light",
            Theme::Dark => "☾ Dark",
        }
    }

    /// The value of `<html data-theme>`, if the choice sets one.
    pub fn attribute(self) -> Option<&'static str> {
        match self {
            Theme::System => None,
            Theme::Light | Theme::Dark => Some(self.as_str()),
        }
    }
}

#[wasm_bindgen]
extern "C" {
    // `localStorage` directly: it may throw (storage disabled, a sandboxed frame), and a
    // theme that cannot be remembered still applies to this page.
    #[wasm_bindgen(catch, js_namespace = localStorage, js_name = getItem)]
    fn storage_get(key: &str) -> Result<Option<String>, JsValue>;
    #[wasm_bindgen(catch, js_namespace = localStorage, js_name = setItem)]
    fn storage_set(key: &str, value: &str) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, js_namespace = localStorage, js_name = removeItem)]
    fn storage_remove(key: &str) -> Result<(), JsValue>;
}

/// The remembered choice (the system's theme if none, or if storage is unavailable).
pub fn stored() -> Theme {
    Theme::parse(storage_get(STORAGE_KEY).ok().flatten().as_deref())
}

/// Shows `theme` on the page (the `data-theme` attribute of `<html>`).
pub fn show(theme: Theme) {
    let Some(root) = leptos::prelude::document().document_element() else {
        return;
    };
    let _ = match theme.attribute() {
        Some(value) => root.set_attribute("data-theme", value),
        None => root.remove_attribute("data-theme"),
    };
}

/// Shows `theme` and remembers it for the next visit.
pub fn choose(theme: Theme) {
    show(theme);
    let _ = match theme {
        Theme::System => storage_remove(STORAGE_KEY),
        _ => storage_set(STORAGE_KEY, theme.as_str()),
    };
}

#[cfg(test)]
#[path = "theme_tests.rs"]
mod tests;
